package processqueue

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// PopQueue is the state of one message queue consumed by POP (Java 5's PopProcessQueue):
// the messages popped from it and not handed back yet (acked, or made invisible again,
// or sent to the dead-letter queue), in the batches their pops returned, for flow
// control, statistics and the extension of invisible times. A POP queue has no offsets:
// the broker tracks each message by its handle, so there is no ordered cache and no
// offset arithmetic here. Its methods are safe for concurrent use.
type PopQueue struct {
	count   atomic.Int64 // messages popped and not handed back (Java's waitAckCounter)
	size    atomic.Int64 // their body bytes
	lastPop atomic.Int64 // unix nanoseconds of the last pop sent
	dropped atomic.Bool

	mu      sync.Mutex
	batches map[*PopBatch]struct{} // batches with a message not handed back
}

// NewPopQueue returns an empty PopQueue, last popped at now.
func NewPopQueue(now time.Time) *PopQueue {
	q := &PopQueue{batches: make(map[*PopBatch]struct{})}
	q.lastPop.Store(now.UnixNano())
	return q
}

// Count returns the messages popped and not handed back yet.
func (q *PopQueue) Count() int64 { return q.count.Load() }

// Size returns their body bytes.
func (q *PopQueue) Size() int64 { return q.size.Load() }

// Dropped reports whether the queue is no longer assigned (no pop is sent for it; its
// messages are still consumed and acked: an ack does not depend on the assignment).
func (q *PopQueue) Dropped() bool { return q.dropped.Load() }

// SetDropped marks the queue dropped.
func (q *PopQueue) SetDropped() { q.dropped.Store(true) }

// SetLastPopTime records a pop sent at now.
func (q *PopQueue) SetLastPopTime(now time.Time) { q.lastPop.Store(now.UnixNano()) }

// LastPopTime returns when the last pop was sent.
func (q *PopQueue) LastPopTime() time.Time { return time.Unix(0, q.lastPop.Load()) }

// PopExpired reports whether the queue was last popped more than PullMaxIdleTime before
// now (Java's PopProcessQueue.isPullExpired).
func (q *PopQueue) PopExpired(now time.Time) bool {
	return now.UnixNano()-q.lastPop.Load() > int64(PullMaxIdleTime)
}

// Add records a pop's batch: its messages now wait for their results.
func (q *PopQueue) Add(b *PopBatch) {
	b.q = q
	var size int64
	for _, m := range b.msgs {
		size += int64(len(m.Body))
	}
	b.size = size
	q.mu.Lock()
	q.batches[b] = struct{}{}
	q.mu.Unlock()
	q.count.Add(int64(len(b.msgs)))
	q.size.Add(size)
}

// Batches returns the batches with messages not handed back yet.
func (q *PopQueue) Batches() []*PopBatch {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]*PopBatch, 0, len(q.batches))
	for b := range q.batches {
		out = append(out, b)
	}
	return out
}

// OldestStoreTimestamp returns the store time (ms) of the oldest message not handed back
// yet, and false when there is none.
func (q *PopQueue) OldestStoreTimestamp() (int64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	oldest, ok := int64(0), false
	for b := range q.batches {
		if ts := b.oldestStore.Load(); ts > 0 && (!ok || ts < oldest) {
			oldest, ok = ts, true
		}
	}
	return oldest, ok
}

// PopAction is what to do with a popped message once its listener call is over, as
// PopBatch.Finish records it.
type PopAction uint8

// Actions.
const (
	PopActionNone    PopAction = iota // nothing yet
	PopActionAck                      // consumed: ack it
	PopActionRetry                    // failed: make it invisible for Delay, to come back from the retry topic
	PopActionDLQ                      // failed past the max reconsume times: dead-letter queue, then ack
	PopActionAbandon                  // nothing to send: its handle expired, the broker gives it to another pop
)

// PopEntry is one popped message's state in its batch.
type PopEntry struct {
	Handle       string    // its current ack handle (POP_CK at first; changed by extensions)
	Deadline     time.Time // when the broker makes it visible again unless handed back
	ConsumeStart time.Time // its listener call's start; zero outside a call

	done      bool          // its result was applied, or is being applied
	extending bool          // a change of its invisible time is in flight
	pending   PopAction     // the result to apply when the change in flight ends
	delay     time.Duration // with PopActionRetry
}

// A BodyLease holds the buffer a batch's message bodies are lent from (pull.Lease, with
// lent bodies): one reference for each message of the batch, which ReleaseBody drops.
type BodyLease interface{ Release() }

// PopBatch is the messages one pop returned from one broker, with their handles. The
// consume service hands its messages to listener calls, and each message leaves the
// batch once its result is applied (Finish); an extension of a message's invisible time
// in flight makes its result wait for the new handle.
type PopBatch struct {
	q           *PopQueue
	msgs        []*message.Ext
	bodies      BodyLease // nil unless the bodies are lent
	popped      time.Time // when the pop was answered
	size        int64
	oldestStore atomic.Int64 // store time (ms) of the oldest message not handed back; 0: none

	mu      sync.Mutex
	entries []PopEntry
	left    int // messages not done
}

// NewPopBatch returns a batch of msgs with their handles, popped at popped, each visible
// again at deadline unless handed back. bodies, when not nil, holds a reference for each
// message of msgs, whose bodies it lends.
func NewPopBatch(msgs []*message.Ext, handles []string, popped, deadline time.Time, bodies BodyLease) *PopBatch {
	b := &PopBatch{msgs: msgs, bodies: bodies, popped: popped, entries: make([]PopEntry, len(msgs)), left: len(msgs)}
	oldest := int64(0)
	for i, m := range msgs {
		b.entries[i] = PopEntry{Handle: handles[i], Deadline: deadline}
		if oldest == 0 || m.StoreTimestamp < oldest {
			oldest = m.StoreTimestamp
		}
	}
	b.oldestStore.Store(oldest)
	return b
}

// Msgs returns the batch's messages.
func (b *PopBatch) Msgs() []*message.Ext { return b.msgs }

// ReleaseBody drops one message's reference to the batch's lent bodies: call it once for
// each message, after its result was applied and nothing reads its body any more (a
// dead-letter send reads it). Without lent bodies it does nothing.
func (b *PopBatch) ReleaseBody() {
	if b.bodies != nil {
		b.bodies.Release()
	}
}

// Queue returns the PopQueue the batch was added to.
func (b *PopBatch) Queue() *PopQueue { return b.q }

// Entry returns a copy of message i's state.
func (b *PopBatch) Entry(i int) PopEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.entries[i]
}

// BeginConsume stamps messages [lo, hi) as in a listener call since now, and reports for
// each whether its handle is still valid (deadline after now): those that are not were
// (or are about to be) given to another pop, and must not be consumed here.
func (b *PopBatch) BeginConsume(lo, hi int, now time.Time, valid []bool) []bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	valid = valid[:0]
	for i := lo; i < hi; i++ {
		e := &b.entries[i]
		ok := !e.done && e.Deadline.After(now)
		if ok {
			e.ConsumeStart = now
		}
		valid = append(valid, ok)
	}
	return valid
}

// Finish records message i's result. It returns the message's state (its handle and
// deadline) to apply it with and true, or false when a change of its invisible time is
// in flight: the result is then kept, and the change's end (EndExtend) returns it with
// the new handle. A message finishes once; a second Finish returns false.
func (b *PopBatch) Finish(i int, action PopAction, delay time.Duration) (PopEntry, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := &b.entries[i]
	if e.done {
		return PopEntry{}, false
	}
	e.ConsumeStart = time.Time{}
	if e.extending {
		e.pending, e.delay = action, delay
		return PopEntry{}, false
	}
	b.doneLocked(i)
	return *e, true
}

// doneLocked marks message i done and releases it from its queue's counts. b.mu is held.
func (b *PopBatch) doneLocked(i int) {
	e := &b.entries[i]
	e.done = true
	b.left--
	if b.q == nil {
		return
	}
	b.q.count.Add(-1)
	b.q.size.Add(-int64(len(b.msgs[i].Body)))
	if b.left == 0 {
		b.oldestStore.Store(0)
		b.q.mu.Lock()
		delete(b.q.batches, b)
		b.q.mu.Unlock()
	} else if b.msgs[i].StoreTimestamp == b.oldestStore.Load() {
		oldest := int64(0)
		for k, m := range b.msgs {
			if !b.entries[k].done && (oldest == 0 || m.StoreTimestamp < oldest) {
				oldest = m.StoreTimestamp
			}
		}
		b.oldestStore.Store(oldest)
	}
}

// DueForExtension appends to out the messages of the batch not handed back whose
// deadline is within margin of now, and marks them extending: an extension of each must
// follow, ended by EndExtend. Nothing is extended once the batch was popped more than
// maxHold ago (a listener call that long is stuck: the broker may give the message to
// someone else).
func (b *PopBatch) DueForExtension(now time.Time, margin, maxHold time.Duration, out []int) []int {
	if now.Sub(b.popped) > maxHold {
		return out
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.entries {
		e := &b.entries[i]
		if e.done || e.extending || e.Deadline.Sub(now) > margin || !e.Deadline.After(now) {
			continue
		}
		e.extending = true
		out = append(out, i)
	}
	return out
}

// EndExtend ends the extension of message i: on success (ok) its handle and deadline
// become the new ones. When its result came meanwhile, EndExtend finishes it and returns
// that result with the message's state to apply it with.
func (b *PopBatch) EndExtend(i int, ok bool, handle string, deadline time.Time) (action PopAction, delay time.Duration, e PopEntry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ent := &b.entries[i]
	ent.extending = false
	if ok {
		ent.Handle, ent.Deadline = handle, deadline
	}
	if ent.pending == PopActionNone || ent.done {
		return PopActionNone, 0, PopEntry{}
	}
	action, delay = ent.pending, ent.delay
	ent.pending = PopActionNone
	b.doneLocked(i)
	return action, delay, *ent
}
