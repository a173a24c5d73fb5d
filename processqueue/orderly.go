package processqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// Take moves up to n messages with the lowest offsets from the cache to the taken set
// and returns them in offset order, for an orderly listener (Java takeMessages). When
// there is nothing to take it returns nil and clears the "consuming" mark that Put set,
// so the next Put asks for a new consume task. It sets the last consume time to
// time.Now(). Taken messages leave the consume-start list: orderly consumption has no
// consume timeout.
func (pq *ProcessQueue) Take(n int) []*message.Ext {
	return pq.TakeAt(n, time.Now())
}

// TakeAt is Take with the last consume time given: the orderly consume service passes
// the end of its previous listener call instead of reading the clock again.
func (pq *ProcessQueue) TakeAt(n int, at time.Time) []*message.Ext {
	var out []*message.Ext

	pq.mu.Lock()
	pq.lastConsume.Store(at.UnixNano())
	if k := min(n, pq.cache.Len()); k > 0 {
		out = make([]*message.Ext, 0, k)
		for range k {
			e, s := pq.cache.DeleteMin()
			pq.unlinkStarted(e)
			pq.taken.ReplaceOrInsert(item{off: e.off, e: e, s: s})
			out = append(out, e.msg)
		}
	}
	if len(out) == 0 {
		pq.consuming = false
	}
	pq.mu.Unlock()
	return out
}

// Commit ends the consumption of the taken messages (Java commit): it forgets them,
// takes them off Count and Size, and returns the offset to store, the last taken offset
// plus one. ok is false, and nothing changes, when nothing is taken (Java would throw
// there; rocketmq-client-go makes up offset 1).
//
// One safety rule is added to Java's: the offset never passes a message still in the
// cache, which can only happen when messages with lower offsets were put back or put
// after Take; with Java's call patterns the result is the same.
func (pq *ProcessQueue) Commit() (offset int64, ok bool) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	last, ok := pq.taken.Max()
	if !ok {
		return 0, false
	}
	offset = last.off + 1
	if first := pq.cache.Min(); first != nil && first.off < offset {
		offset = first.off
	}
	var bytes int64
	for _, it := range pq.taken.All() {
		bytes += int64(it.e.size)
		it.e.msg = nil // its segment may stay cached for a while: let the message go
	}
	pq.count.Sub(int64(pq.taken.Len()))
	pq.size.Sub(bytes)
	pq.taken.Clear()
	return offset, true
}

// ConsumeAgain puts taken messages back into the cache, to be taken again (Java
// makeMessageToConsumeAgain). Messages that are not taken are skipped (Java would put
// them into the cache without counting them).
func (pq *ProcessQueue) ConsumeAgain(msgs []*message.Ext) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	for _, m := range msgs {
		if m == nil {
			continue
		}
		if it, ok := pq.taken.Delete(m.QueueOffset); ok {
			pq.readd(it)
		}
	}
}

// Rollback puts every taken message back into the cache (Java rollback).
func (pq *ProcessQueue) Rollback() {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	for _, it := range pq.taken.All() {
		pq.readd(it)
	}
	pq.taken.Clear()
}

// TakenCount returns how many messages are taken and not yet committed or put back.
func (pq *ProcessQueue) TakenCount() int {
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	return pq.taken.Len()
}

// LockConsume acquires the consume lock, waiting until it is free or ctx ends (then it
// returns an error wrapping ctx.Err()). The orderly consume service holds it while a
// listener runs on this queue; rebalance takes it (with a short deadline, Java uses
// 1 s in 4.9 and 500 ms in 5.x) before it persists the offset and unlocks a removed
// queue, so the unlock never happens in the middle of a consume. A free lock is always
// acquired, even if ctx has already ended. It is Java's consumeLock; it is not
// reentrant.
func (pq *ProcessQueue) LockConsume(ctx context.Context) error {
	select {
	case pq.consumeLock <- struct{}{}:
		return nil
	default:
	}
	select {
	case pq.consumeLock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("processqueue: waiting for the consume lock: %w", ctx.Err())
	}
}

// TryLockConsume acquires the consume lock if it is free and reports whether it did.
func (pq *ProcessQueue) TryLockConsume() bool {
	select {
	case pq.consumeLock <- struct{}{}:
		return true
	default:
		return false
	}
}

// UnlockConsume releases the consume lock. Like sync.Mutex.Unlock, it panics if the
// lock is not held: that is a bug in the caller.
func (pq *ProcessQueue) UnlockConsume() {
	select {
	case <-pq.consumeLock:
	default:
		panic("processqueue: UnlockConsume of an unlocked consume lock")
	}
}

// readd puts a taken entry back into the cache. Put never caches a message at a taken
// offset, so the cache has none there; should it have one, the taken entry is dropped
// and uncounted rather than cached twice.
func (pq *ProcessQueue) readd(it item) {
	if !pq.cache.Readd(it.e, it.s) {
		pq.count.Dec()
		pq.size.Sub(int64(it.e.size))
	}
}
