package consumer

import (
	"context"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/processqueue"
)

// queueLocks manages the broker locks of an orderly clustering consumer: a queue is
// consumed only while this client holds its lock on the broker (LOCK_BATCH_MQ), so no
// two clients of the group consume one queue at once.
type queueLocks struct {
	c *PushConsumer
	// mu orders the lock requests for queues in the rebalancer's table (renewAll,
	// relock) against the unlock of a released queue: no request can reach the broker
	// after the unlock and lock the queue again for this client, which no longer has it.
	mu sync.Mutex
}

// brokerLockExpiry is how long a broker keeps a lock that is not renewed (its
// rebalanceLockMaxLiveTime, 60 s by default).
const brokerLockExpiry = 60 * time.Second

// heldAllAlong reports whether pq's lock, granted by the broker now, was held since it
// was last obtained: pq counts it as locked and obtained it within the broker's expiry.
// A lock that lapsed (renewals failed through a partition) may have gone to another
// client meanwhile, which may have consumed the queue further: regain checks that.
func heldAllAlong(pq *processqueue.ProcessQueue, now time.Time) bool {
	return pq.Locked() && now.Sub(pq.LastLockTime()) < brokerLockExpiry
}

// valid reports whether pq may be consumed at now: locked, and the lock renewed
// recently.
func (l *queueLocks) valid(pq *processqueue.ProcessQueue, now time.Time) bool {
	return pq.Locked() && !pq.LockExpired(now)
}

// lockNew locks a queue about to be added (the rebalancer's BeforeAdd): a queue is only
// consumed after its lock was obtained, and its start offset is then read from the
// broker, after the previous owner released it.
func (l *queueLocks) lockNew(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue) bool {
	locked, err := l.c.inst.LockBatch(ctx, l.c.group, q.BrokerName, []message.Queue{q})
	if err != nil {
		// The broker may have locked it before the call failed here (a timeout, a
		// cancelled rebalance): release it so it does not wait for the lock expiry.
		l.unlockBroker(ctx, q, pq)
		l.c.logf(logging.LevelWarn, "locking a new orderly queue failed; it is not started this round", q, err)
		return false
	}
	for _, lq := range locked {
		if lq == q {
			pq.SetLocked(true, time.Now())
			return true
		}
	}
	l.c.logf(logging.LevelInfo, "a new orderly queue is locked by another client; it is not started this round", q, nil)
	return false
}

// renewAll renews the locks of every assigned queue, one LOCK_BATCH_MQ per broker
// (every lockRenewInterval). A renewed lock refreshes the queue's lock time (which
// rocketmq-client-go forgets to do); a queue the broker now gives to another client stops
// being consumed; a queue whose lock comes back after it was lost, or after it lapsed
// past the broker's expiry, is checked by regain.
//
// A dropped queue still holding its lock is renewed too, as Java does: its removal
// found a listener call running and keeps it until the call ends; the lock must outlive
// the call, or the queue's next owner would consume it meanwhile. Its release unlocks
// it.
func (l *queueLocks) renewAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	byBroker := map[string][]message.Queue{}
	pqs := l.c.rebalancer.ProcessQueues()
	for q, pq := range pqs {
		if !pq.Dropped() || pq.Locked() {
			byBroker[q.BrokerName] = append(byBroker[q.BrokerName], q)
		}
	}
	var wg sync.WaitGroup
	for broker, qs := range byBroker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(l.c.listenerCtx, l.c.cfg.apiTimeout)
			defer cancel()
			locked, err := l.c.inst.LockBatch(ctx, l.c.group, broker, qs)
			if err != nil {
				l.c.logf(logging.LevelWarn, "renewing orderly locks failed", message.Queue{Topic: qs[0].Topic, BrokerName: broker}, err)
				return // the local locks expire on their own after LockMaxLiveTime
			}
			granted := make(map[message.Queue]bool, len(locked))
			for _, q := range locked {
				granted[q] = true
			}
			now := time.Now()
			for _, q := range qs {
				pq := pqs[q]
				switch {
				case granted[q] && heldAllAlong(pq, now):
					pq.SetLocked(true, now)
				case granted[q]:
					l.regain(ctx, q, pq)
				case pq.Locked():
					pq.SetLocked(false, now)
					l.c.logf(logging.LevelWarn, "lost the broker lock of an orderly queue; consumption of it stops until it is locked again", q, nil)
				}
			}
		}()
	}
	wg.Wait()
}

// regain is called when the lock of a queue that had lost it (or let it lapse) is
// granted again. If
// another client consumed the queue further meanwhile (the broker's offset is beyond
// this client's), this client's cache and offset are stale: the queue is forgotten,
// without persisting, and recreated from the broker's offset. Otherwise consumption
// resumes where it stopped.
func (l *queueLocks) regain(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue) bool {
	mine, err := l.c.offsets.Read(ctx, q, offset.ReadFromMemory)
	if err != nil {
		return false
	}
	theirs, found, err := l.c.inst.QueryConsumerOffset(ctx, l.c.group, q)
	if err != nil {
		l.c.logf(logging.LevelWarn, "regained an orderly queue's lock but cannot read its offset; trying again later", q, err)
		return false
	}
	if found && theirs > mine {
		l.c.rebalancer.Forget(q, pq)
		return false
	}
	pq.SetLocked(true, time.Now())
	l.c.logf(logging.LevelInfo, "orderly queue locked again; consumption resumes", q, nil)
	return true
}

// relock tries to lock one queue whose task found it unlocked; it reports whether the
// queue may be consumed.
func (l *queueLocks) relock(q message.Queue, pq *processqueue.ProcessQueue) bool {
	if l.valid(pq, time.Now()) {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if pq.Dropped() {
		return false // released, or about to be: not to be locked again
	}
	ctx, cancel := context.WithTimeout(l.c.listenerCtx, l.c.cfg.apiTimeout)
	defer cancel()
	locked, err := l.c.inst.LockBatch(ctx, l.c.group, q.BrokerName, []message.Queue{q})
	if err != nil || len(locked) != 1 || locked[0] != q {
		return false
	}
	if now := time.Now(); heldAllAlong(pq, now) { // only the lock time had run out
		pq.SetLocked(true, now)
		return true
	}
	return l.regain(ctx, q, pq)
}

// release is the rebalancer's BeforeRemove for orderly clustering: it waits, briefly,
// for the listener call in progress on the queue to end and keeps the consume lock, so
// the offset persisted next includes that call and no call starts before the broker
// lock is released by unlock. If the call goes on, the queue is kept (still dropped) for
// the next pass, as Java does.
func (l *queueLocks) release(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue) bool {
	ctx, cancel := context.WithTimeout(ctx, removeLockWait)
	defer cancel()
	if err := pq.LockConsume(ctx); err != nil {
		pq.IncTryUnlockTimes()
		l.c.logf(logging.LevelWarn, "an orderly queue to drop is still being consumed; trying again at the next rebalance", q, err)
		return false
	}
	return true
}

// unlock is the rebalancer's AfterRemove for orderly clustering: the offset is
// persisted, so the broker lock can go to the queue's next owner. Under mu, and marked
// unlocked first, so no renewal locks it again.
func (l *queueLocks) unlock(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue) {
	defer pq.UnlockConsume()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unlockBroker(ctx, q, pq)
}

// unlockBroker releases the broker lock of q, which pq no longer counts on, even if
// the call fails. It runs even when ctx is already done (a cancelled rebalance, a
// shutdown out of time), within the request timeout: a lock left behind blocks the
// queue's next owner until the broker's lock expiry.
func (l *queueLocks) unlockBroker(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue) {
	pq.SetLocked(false, time.Now())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.c.cfg.apiTimeout)
	defer cancel()
	if err := l.c.inst.UnlockBatch(ctx, l.c.group, q.BrokerName, []message.Queue{q}); err != nil {
		l.c.logf(logging.LevelWarn, "unlocking an orderly queue failed; the broker frees it when the lock expires", q, err)
	}
}
