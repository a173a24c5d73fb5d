package processqueue

import (
	"math"
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// Put caches the messages of one pull (Java putMessage) and reports what to consume.
// It sets each cached message's CachedAt to the time of the call.
//
// Messages whose offset is already cached (in the cache or taken by an orderly
// listener), repeats inside msgs, and nil entries are ignored: they are neither counted
// nor returned, and a cached message keeps its first copy. added holds the messages that were cached, in the order given; it is msgs
// itself when none was ignored (the usual case, with no allocation) and a new slice
// otherwise. The concurrent consume service dispatches added, never msgs, so a duplicate
// is never consumed twice.
//
// dispatch is Java's result, for orderly consumption: true when the cache is not empty
// and no orderly consume task owns the queue; Put then marks the queue as owned, and the
// caller must start one task. Take clears the mark when it finds nothing to take. (Java's
// rule looks at the cache, not at what this call added: if messages ever wait with no
// task, the next Put, even an empty one, asks for a task.)
//
// brokerMaxOffset is the broker's max offset for the queue from the pull response (Java
// reads it from the MAX_OFFSET property of the last message), or a negative value when
// unknown; see BrokerMaxOffset and AccumulatedCount.
func (pq *ProcessQueue) Put(msgs []*message.Ext, brokerMaxOffset int64) (added []*message.Ext, dispatch bool) {
	var slab []entry
	if len(msgs) > 0 {
		slab = make([]entry, len(msgs))
	}
	for i, m := range msgs {
		if m != nil {
			slab[i] = entry{msg: m, off: m.QueueOffset, size: int32(min(len(m.Body), math.MaxInt32))}
		}
	}
	added = msgs
	aliasing := true // added is msgs itself until the first duplicate
	n, bytes := 0, int64(0)
	now := time.Now() // every message's CachedAt: one clock read per pull

	pq.mu.Lock()
	// A pull's messages come after everything cached and taken: one segment. Anything
	// before its tail of new messages in order (a re-pull's overlap, messages in a
	// strange order) goes in one message at a time.
	k := pq.runStart(slab, msgs)
	run := false
	for i, m := range msgs {
		e := &slab[i]
		if i == k {
			// What went in one at a time may be in the tail's range: checked again.
			if run = k == 0 || pq.cache.fits(slab[k:]); run {
				pq.cache.AddRun(slab[k:])
			}
		}
		dup := false
		if !run {
			dup = m == nil ||
				pq.taken.Len() > 0 && pq.taken.Has(e.off) ||
				!pq.cache.Add(slab[i:i+1]) // a cached copy stays, with its start time
		}
		if dup {
			e.msg = nil // the slab may stay reachable through the others' segments
			if aliasing {
				added = make([]*message.Ext, i, len(msgs)-1)
				copy(added, msgs[:i])
				aliasing = false
			}
			continue
		}
		if !aliasing {
			added = append(added, m)
		}
		m.CachedAt = now // before any consume worker can see it
		n++
		bytes += int64(e.size)
		if e.off > pq.queueOffsetMax {
			pq.queueOffsetMax = e.off
		}
	}
	pq.count.Add(int64(n))
	pq.size.Add(bytes)
	if pq.cache.Len() > 0 && !pq.consuming {
		dispatch = true
		pq.consuming = true
	}
	pq.mu.Unlock()

	if last := len(msgs) - 1; last >= 0 && msgs[last] != nil && brokerMaxOffset >= 0 {
		pq.brokerMaxOffset.Store(brokerMaxOffset)
		if acc := brokerMaxOffset - msgs[last].QueueOffset; acc > 0 {
			pq.accCount.Store(acc)
		}
	}
	return added, dispatch
}

// runStart returns where the tail of slab that can go into the cache as one segment
// begins: its messages all there, in strictly increasing order, after every taken
// message, and, unless the whole tail fits between cached segments, after every cached
// one. It returns len(slab) when there is no such tail. The caller holds pq.mu.
func (pq *ProcessQueue) runStart(slab []entry, msgs []*message.Ext) int {
	after := int64(math.MinInt64)
	if last, ok := pq.taken.Max(); ok {
		after = last.off
	}
	k := len(msgs)
	for k > 0 && msgs[k-1] != nil && slab[k-1].off > after && (k == len(msgs) || slab[k-1].off < slab[k].off) {
		k--
	}
	if k == len(msgs) || pq.cache.fits(slab[k:]) {
		return k
	}
	if last, ok := pq.cache.tree.Max(); ok {
		for k < len(msgs) && slab[k].off <= last.s.last() {
			k++
		}
	}
	return k
}

// Remove deletes consumed (or sent back) messages from the cache (Java removeMessage)
// and returns the offset the consumer may store, or -1 when the cache was empty. Messages
// not in the cache are skipped.
//
// The result is Java's: the smallest offset still cached, or the highest offset ever put
// plus one when the cache is now empty. One safety rule is added: the result never
// passes a message taken by an orderly listener and not committed. Java's orderly
// consumer never calls Remove, so for Java's call patterns the result is the same.
//
// Remove also sets the last consume time to time.Now().
func (pq *ProcessQueue) Remove(msgs []*message.Ext) int64 {
	return pq.RemoveAt(msgs, time.Now())
}

// RemoveAt is Remove with the last consume time given: a caller that read the clock
// anyway (the end of a listener call) passes that reading instead of reading it again.
// The concurrent consume service uses RemoveAndMark.
func (pq *ProcessQueue) RemoveAt(msgs []*message.Ext, at time.Time) int64 {
	return pq.RemoveAndMark(msgs, nil, at)
}

// RemoveAndMark is RemoveAt, and MarkConsumeStart of next at the same time, under one
// lock: a consume worker that goes on from one listener call to the next of the same
// queue (see the consumer's runs) removes what the first consumed and stamps what the
// second is given at once.
func (pq *ProcessQueue) RemoveAndMark(msgs, next []*message.Ext, at time.Time) int64 {
	now := at.UnixNano()
	start := pq.since(at)
	result := int64(-1)
	n, bytes := int64(0), int64(0)

	pq.mu.Lock()
	pq.lastConsume.Store(now)
	if pq.cache.Len() > 0 {
		result = pq.queueOffsetMax + 1
		for _, m := range msgs {
			if m == nil {
				continue
			}
			e := pq.cache.Delete(m.QueueOffset)
			if e == nil {
				continue
			}
			pq.unlinkStarted(e)
			e.msg = nil // its segment may stay cached for a while: let the message go
			n++
			bytes += int64(e.size)
		}
		pq.count.Sub(n)
		pq.size.Sub(bytes)
		if first := pq.cache.Min(); first != nil {
			result = first.off
		}
		if first, ok := pq.taken.Min(); ok && first.off < result {
			result = first.off
		}
		pq.markLocked(next, start)
	}
	pq.mu.Unlock()
	return result
}

// MaxSpan returns the last cached offset minus the first, or 0 when the cache is empty
// (Java getMaxSpan). Messages taken by an orderly listener do not count.
func (pq *ProcessQueue) MaxSpan() int64 {
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	first := pq.cache.Min()
	if first == nil {
		return 0
	}
	return pq.cache.Max().off - first.off
}

// Contains reports whether a message with msg's queue offset is in the cache (Java 5
// containsMessage): the concurrent consumer skips sending back a message that consume
// timeout handling already removed.
func (pq *ProcessQueue) Contains(msg *message.Ext) bool {
	if msg == nil {
		return false
	}
	return pq.ContainsOffset(msg.QueueOffset)
}

// ContainsOffset reports whether a message with queue offset off is in the cache.
// Messages taken by an orderly listener are not in the cache.
func (pq *ProcessQueue) ContainsOffset(off int64) bool {
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	return pq.cache.Get(off) != nil
}

// HasCached reports whether the cache holds any message (Java hasTempMessage). Messages
// taken by an orderly listener do not count.
func (pq *ProcessQueue) HasCached() bool {
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	return pq.cache.Len() > 0
}

// Clear empties the cache and the taken messages, zeroes the count and size and resets
// the highest offset seen to 0 (Java clear, used when the broker resets the consumer's
// offsets). Flags and times are unchanged.
func (pq *ProcessQueue) Clear() {
	pq.mu.Lock()
	pq.cache.Clear()
	pq.taken.Clear()
	pq.startHead, pq.startTail = nil, nil
	pq.count.Store(0)
	pq.size.Store(0)
	pq.queueOffsetMax = 0
	pq.mu.Unlock()
}

// Cached returns the messages of msgs still cached (not removed, taken or cleared), in
// order, under one lock. It returns msgs itself when all are.
func (pq *ProcessQueue) Cached(msgs []*message.Ext) []*message.Ext {
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	out := msgs
	for i, m := range msgs {
		e := pq.cache.Get(m.QueueOffset)
		present := e != nil && e.msg == m
		if present && len(out) != len(msgs) {
			out = append(out, m)
		}
		if !present && len(out) == len(msgs) {
			out = append(make([]*message.Ext, 0, len(msgs)), msgs[:i]...)
		}
	}
	return out
}
