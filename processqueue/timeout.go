package processqueue

import (
	"bytes"
	"cmp"
	"slices"
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// Consume timeout support.
//
// Java stamps CONSUME_START_TIME on each message when a listener gets it, and every
// ConsumeTimeout minutes looks at the first (at most 16) messages of the cache, sending
// back those whose stamp is older than ConsumeTimeout. A stuck message behind the first
// 16 waits for later rounds, and a round costs a property parse per message.
//
// Here every cached entry that MarkConsumeStart stamped is also on a doubly linked list
// ordered by start time, oldest first. Stamping appends at the tail (walking back only
// past entries stamped with a later time, which happens only when callers pass clocks
// slightly out of order), removing an entry unlinks it in O(1), and Expired walks from
// the head and stops at the first entry that has not expired. So Expired costs
// O(expired), exactly finds every expired message wherever it sits in the cache, and
// the hot path pays one tree lookup per stamped message and two pointer updates per
// removal. Entries leave the list when they leave the cache (Remove, Take, Clear).

// since returns how long after the queue's creation now is, in nanoseconds: the
// consume-start stamps are kept so, which compares monotonic clock readings when both
// times have one (times from time.Now do), so that a step of the wall clock can neither
// expire every message in flight nor keep any from expiring.
func (pq *ProcessQueue) since(now time.Time) int64 { return int64(now.Sub(pq.created)) }

// MarkConsumeStart records now as the consume start time of each of msgs still in the
// cache, replacing an earlier stamp (a message consumed again after a failed send-back
// starts over). The consume service calls it when it hands msgs to the listener.
func (pq *ProcessQueue) MarkConsumeStart(msgs []*message.Ext, now time.Time) {
	start := pq.since(now)
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.markLocked(msgs, start)
}

// RestampConsumeStart is MarkConsumeStart for the messages of msgs still in the listener
// call they were stamped for: still cached as themselves and still stamped. The consume
// timeout check restamps what it hands to its sweeper so that the next check does not
// hand it over again; a message whose call ended meanwhile (consumed, or kept for a
// local retry) must not be stamped as if it were in one, for the sweeper sends back only
// messages in a call (see InCall).
func (pq *ProcessQueue) RestampConsumeStart(msgs []*message.Ext, now time.Time) {
	start := pq.since(now)
	pq.mu.Lock()
	defer pq.mu.Unlock()
	for _, m := range msgs {
		if m == nil {
			continue
		}
		if e := pq.cache.Get(m.QueueOffset); e != nil && e.msg == m && e.started {
			pq.unlinkStarted(e)
			pq.linkStarted(e, start)
		}
	}
}

// markLocked stamps msgs still cached with start; pq.mu is held.
func (pq *ProcessQueue) markLocked(msgs []*message.Ext, start int64) {
	for _, m := range msgs {
		if m == nil {
			continue
		}
		e := pq.cache.Get(m.QueueOffset)
		if e == nil {
			continue
		}
		pq.unlinkStarted(e)
		pq.linkStarted(e, start)
	}
}

// ClearConsumeStart forgets the consume start time of msgs (those still cached): they
// are no longer in a listener call, e.g. while the worker itself sends them back after
// a failed call, so the consume timeout must not fire for them (RetryLater does the same
// for messages kept for a local retry).
func (pq *ProcessQueue) ClearConsumeStart(msgs []*message.Ext) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.clearLocked(msgs)
}

// RetryLater is ClearConsumeStart for messages kept for a local retry, and counts the
// retry: each of msgs gets one more ReconsumeTimes, under the same lock as InCall's
// copy, so a consume-timeout sweep that copied a message before sees the old count and
// one that looks after does not see it in a call at all.
func (pq *ProcessQueue) RetryLater(msgs []*message.Ext) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.clearLocked(msgs)
	for _, m := range msgs {
		if m != nil {
			m.ReconsumeTimes++
		}
	}
}

func (pq *ProcessQueue) clearLocked(msgs []*message.Ext) {
	for _, m := range msgs {
		if m == nil {
			continue
		}
		if e := pq.cache.Get(m.QueueOffset); e != nil {
			pq.unlinkStarted(e)
		}
	}
}

// InCall returns a copy of msg when msg itself (the same object, not only a message at
// its queue offset: a reset may have cached another there) is cached and in a listener
// call (its consume start is stamped): what a consume-timeout sweep sends back, checking
// again just before acting on each message it picked earlier, as Java's cleanExpiredMsg
// re-reads under the lock. The copy is taken under the lock RetryLater counts a retry
// under; a message that left the call (a local retry) or the cache (consumed, sent back)
// since the sweep picked it gives ok false. The copy's Body is a copy too: a consumer
// that lends bodies (WithLentBodies) reuses the original's memory once the listener
// call removes the message, which it may do while the sweep sends the copy back.
func (pq *ProcessQueue) InCall(msg *message.Ext) (copied message.Ext, ok bool) {
	if msg == nil {
		return message.Ext{}, false
	}
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	e := pq.cache.Get(msg.QueueOffset)
	if e == nil || e.msg != msg || !e.started {
		return message.Ext{}, false
	}
	copied = *msg
	copied.Body = bytes.Clone(msg.Body)
	return copied, true
}

// ConsumeStartTime returns the consume start time MarkConsumeStart recorded for the
// cached message at offset off; ok is false when the message is not cached or was
// never stamped.
func (pq *ProcessQueue) ConsumeStartTime(off int64) (start time.Time, ok bool) {
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	e := pq.cache.Get(off)
	if e == nil || !e.started {
		return time.Time{}, false
	}
	return pq.created.Add(time.Duration(e.start)), true
}

// Expired returns, in offset order, up to limit cached messages whose consume started
// more than timeout before now, choosing those that started first. It returns nil when
// limit < 1 or none has expired. It changes nothing: the caller sends each message back
// and then calls Remove (or MarkConsumeStart again to give it more time), as Java's
// cleanExpiredMsg does.
func (pq *ProcessQueue) Expired(now time.Time, timeout time.Duration, limit int) []*message.Ext {
	if limit < 1 {
		return nil
	}
	cutoff := pq.since(now) - int64(timeout)
	type expired struct {
		off int64
		msg *message.Ext
	}
	found := make([]expired, 0, min(limit, 16))
	pq.mu.RLock()
	// Offsets and messages are read under the lock: Remove clears an entry's msg
	// once it leaves the cache.
	for e := pq.startHead; e != nil && e.start < cutoff && len(found) < limit; e = e.next {
		found = append(found, expired{e.off, e.msg})
	}
	pq.mu.RUnlock()
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b expired) int { return cmp.Compare(a.off, b.off) })
	out := make([]*message.Ext, len(found))
	for i, f := range found {
		out[i] = f.msg
	}
	return out
}

// linkStarted puts e on the consume-start list with start time start, after every entry
// that started at or before it. The caller holds pq.mu for writing.
func (pq *ProcessQueue) linkStarted(e *entry, start int64) {
	e.start, e.started = start, true
	after := pq.startTail
	for after != nil && after.start > start {
		after = after.prev
	}
	e.prev = after
	if after == nil {
		e.next = pq.startHead
		pq.startHead = e
	} else {
		e.next = after.next
		after.next = e
	}
	if e.next == nil {
		pq.startTail = e
	} else {
		e.next.prev = e
	}
}

// unlinkStarted takes e off the consume-start list if it is on it. The caller holds
// pq.mu for writing.
func (pq *ProcessQueue) unlinkStarted(e *entry) {
	if !e.started {
		return
	}
	if e.prev == nil {
		pq.startHead = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next == nil {
		pq.startTail = e.prev
	} else {
		e.next.prev = e.prev
	}
	e.prev, e.next, e.started = nil, nil, false
}
