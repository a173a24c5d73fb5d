package processqueue

import (
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/rmqpush/rmqpush/message"
)

// Time limits of Java's ProcessQueue, with Java's default values.
const (
	// PullMaxIdleTime is how long a queue may go without a pull before PullExpired
	// reports it (Java PULL_MAX_IDLE_TIME, property rocketmq.client.pull.pullMaxIdleTime).
	PullMaxIdleTime = 120 * time.Second
	// LockMaxLiveTime is how long a broker lock on an orderly queue is trusted after it
	// was last obtained (Java REBALANCE_LOCK_MAX_LIVE_TIME,
	// rocketmq.client.rebalance.lockMaxLiveTime).
	LockMaxLiveTime = 30 * time.Second
	// LockInterval is how often the orderly consumer renews its broker locks (Java
	// REBALANCE_LOCK_INTERVAL, rocketmq.client.rebalance.lockInterval). This package
	// does not use it; it is kept here beside LockMaxLiveTime, as in Java.
	LockInterval = 20 * time.Second
)

// btreeDegree is the degree of the cache's tree. A queue caches about a thousand
// messages at most (PullThresholdForQueue), so the tree stays two or three levels deep.
const btreeDegree = 16

// entry is one cached message. Entries are allocated in one slab per Put call, which
// is also the cache's segment of them (see segments.go), so a batch of pulled messages
// costs two allocations.
type entry struct {
	msg *message.Ext
	off int64 // msg.QueueOffset when it was put

	// Consume-start list links (see timeout.go). An entry is on the list only while
	// it is in the cache tree and MarkConsumeStart stamped it.
	start      int64 // nanoseconds after the queue's creation (see since)
	prev, next *entry

	size    int32 // body bytes counted for this message, at most MaxInt32
	started bool
	cached  bool // in the cache (see cacheMap)
	// 48 bytes: a pull's 32 entries and the allocator's 8-byte header fit its 1,792-byte
	// size class (56-byte entries took 2,048).
}

// item is what the taken set holds: the key by value.
type item struct {
	off int64
	e   *entry
	s   *segment // e's segment, where Readd puts it back
}

// ProcessQueue is the cache of messages pulled from one message queue and not yet
// consumed. The zero value is not usable; create one with New.
type ProcessQueue struct {
	mu sync.RWMutex
	// cache holds the pulled messages not handed to an orderly listener (Java
	// msgTreeMap).
	cache cacheMap
	// taken holds the messages Take handed to an orderly listener and not yet
	// committed or put back (Java consumingMsgOrderlyTreeMap).
	taken takenSet
	// created is the time New was given, which consume-start stamps are relative to.
	created time.Time
	// queueOffsetMax is the highest offset ever put (Java queueOffsetMax, which Java
	// sets to the offset of the last message added: the same value, because pulled
	// messages come in offset order). Clear resets it to 0.
	queueOffsetMax int64
	// consuming is true while an orderly consume task owns the queue (Java consuming).
	consuming bool
	// head and tail of the consume-start list, oldest start first.
	startHead, startTail *entry

	count           atomic.Int64 // messages in cache and taken (Java msgCount)
	size            atomic.Int64 // body bytes in cache and taken (Java msgSize)
	brokerMaxOffset atomic.Int64 // latest broker max offset hint, -1 when unknown
	accCount        atomic.Int64 // Java msgAccCnt

	dropped        atomic.Bool
	discarded      atomic.Bool
	locked         atomic.Bool
	tryUnlockTimes atomic.Int64
	lastPull       atomic.Int64 // unix nanoseconds
	lastConsume    atomic.Int64 // unix nanoseconds
	lastLock       atomic.Int64 // unix nanoseconds

	// inflight counts the concurrent consume calls running on this queue (see
	// inflight.go); idle, made by a waiter, is closed when it drops to zero.
	inflightMu sync.Mutex
	inflight   int
	idle       chan struct{}

	// consumeLock is a one-slot semaphore: a channel, so that waiting for it can be
	// bounded by a context (see LockConsume).
	consumeLock chan struct{}
}

// New returns an empty ProcessQueue whose last pull, consume and lock times are now, as
// a new Java ProcessQueue's are.
func New(now time.Time) *ProcessQueue {
	pq := &ProcessQueue{
		created:     now,
		cache:       newCacheMap(),
		consumeLock: make(chan struct{}, 1),
	}
	n := now.UnixNano()
	pq.lastPull.Store(n)
	pq.lastConsume.Store(n)
	pq.lastLock.Store(n)
	pq.brokerMaxOffset.Store(-1)
	return pq
}

// Count returns the number of cached messages, including those taken by an orderly
// listener and not yet committed (Java msgCount). It does not take the lock.
func (pq *ProcessQueue) Count() int64 { return pq.count.Load() }

// Size returns the body bytes of the messages Count counts (Java msgSize). It does not
// take the lock.
func (pq *ProcessQueue) Size() int64 { return pq.size.Load() }

// BrokerMaxOffset returns the broker's max offset for the queue as last given to Put,
// or -1 when no Put carried one. The consumer's lag is BrokerMaxOffset minus its
// committed offset.
func (pq *ProcessQueue) BrokerMaxOffset() int64 { return pq.brokerMaxOffset.Load() }

// AccumulatedCount returns Java's msgAccCnt: the broker's max offset minus the offset of
// the last message of the latest Put that carried a max offset, when that difference was
// positive (0 until then).
func (pq *ProcessQueue) AccumulatedCount() int64 { return pq.accCount.Load() }

// Dropped reports whether the queue was dropped: rebalance took it away, or its offset
// became illegal. A dropped queue's offsets must not be stored.
func (pq *ProcessQueue) Dropped() bool { return pq.dropped.Load() }

// SetDropped sets the dropped flag.
func (pq *ProcessQueue) SetDropped(dropped bool) { pq.dropped.Store(dropped) }

// Discard marks the queue's consume results as void: a listener call still running on
// it must not store an offset any more. Rebalance discards a queue once its removal is
// final, and at once when the broker corrects its offset or an admin resets it (the
// cached messages' offsets no longer mean anything).
func (pq *ProcessQueue) Discard() { pq.discarded.Store(true) }

// Discarded reports whether Discard was called.
func (pq *ProcessQueue) Discarded() bool { return pq.discarded.Load() }

// LastPullTime returns when the queue was last pulled.
func (pq *ProcessQueue) LastPullTime() time.Time { return time.Unix(0, pq.lastPull.Load()) }

// SetLastPullTime records a pull at now.
func (pq *ProcessQueue) SetLastPullTime(now time.Time) { pq.lastPull.Store(now.UnixNano()) }

// PullExpired reports whether the queue was last pulled more than PullMaxIdleTime
// before now (Java isPullExpired); rebalance then drops it so it is recreated.
func (pq *ProcessQueue) PullExpired(now time.Time) bool {
	return now.UnixNano()-pq.lastPull.Load() > int64(PullMaxIdleTime)
}

// LastConsumeTime returns when a consume service last removed (Remove) or took (Take)
// messages, or when SetLastConsumeTime last set it.
func (pq *ProcessQueue) LastConsumeTime() time.Time {
	return time.Unix(0, pq.lastConsume.Load())
}

// SetLastConsumeTime sets the last consume time to now.
func (pq *ProcessQueue) SetLastConsumeTime(now time.Time) { pq.lastConsume.Store(now.UnixNano()) }

// Locked reports whether this client holds the broker lock for the queue (orderly
// consumption).
func (pq *ProcessQueue) Locked() bool { return pq.locked.Load() }

// SetLocked records the outcome of a broker lock or unlock. When locked is true the last
// lock time becomes now; when false the last lock time is left as it was, as in Java,
// where unlocking never touches lastLockTimestamp.
func (pq *ProcessQueue) SetLocked(locked bool, now time.Time) {
	if locked {
		pq.lastLock.Store(now.UnixNano())
	}
	pq.locked.Store(locked)
}

// LastLockTime returns when the broker lock was last obtained (or when the queue was
// created, if never).
func (pq *ProcessQueue) LastLockTime() time.Time { return time.Unix(0, pq.lastLock.Load()) }

// LockExpired reports whether the broker lock was last obtained more than
// LockMaxLiveTime before now (Java isLockExpired).
func (pq *ProcessQueue) LockExpired(now time.Time) bool {
	return now.UnixNano()-pq.lastLock.Load() > int64(LockMaxLiveTime)
}

// TryUnlockTimes returns how many times removing the queue could not get the consume
// lock (Java tryUnlockTimes).
func (pq *ProcessQueue) TryUnlockTimes() int64 { return pq.tryUnlockTimes.Load() }

// IncTryUnlockTimes adds one to TryUnlockTimes.
func (pq *ProcessQueue) IncTryUnlockTimes() { pq.tryUnlockTimes.Inc() }
