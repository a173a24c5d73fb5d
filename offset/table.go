package offset

import (
	"fmt"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// entry is one queue's offset in memory.
type entry struct {
	offset    int64
	persisted int64 // the offset last written successfully, or -1
	frozen    bool

	// Writes to the broker in flight (the remote store; see commit.go).
	pulling bool      // a pull carrying the offset is unanswered
	writing bool      // an UPDATE_CONSUMER_OFFSET is unanswered
	unsure  time.Time // until then a write whose outcome is unknown may still land
}

// table is the in-memory offset table both stores share.
type table struct {
	mu      sync.Mutex
	entries map[message.Queue]*entry
	settled chan struct{}            // closed when a write in flight ends; nil when nobody waits
	grace   time.Duration            // unsureGrace
	maxWait time.Duration            // maxCommitWait
	commit  func()                   // the commit hook (see commit.go), or nil
	leases  map[message.Queue]*lease // each queue's current lease (see Lease)
}

// lease is the state a Lease points to; its fields are read and set under the table's
// mu.
type lease struct {
	q     message.Queue
	ended bool
	// e is q's entry once an update through the lease has found or made it, so that
	// the next ones (an orderly consumer updates once per listener call) skip the map
	// lookup: nil, or the entry t.entries holds for q. Forgetting q's entry, and ending
	// the lease, clear it.
	e *entry
}

func newTable() table {
	return table{entries: make(map[message.Queue]*entry), leases: make(map[message.Queue]*lease),
		grace: unsureGrace, maxWait: maxCommitWait}
}

// begin starts a new lease of q, ending the one it had.
func (t *table) begin(q message.Queue) Lease {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLeaseLocked(q)
	l := &lease{q: q}
	t.leases[q] = l
	return Lease{l: l}
}

// endLeaseLocked ends q's lease. t.mu is held.
func (t *table) endLeaseLocked(q message.Queue) {
	if l, ok := t.leases[q]; ok {
		l.ended, l.e = true, nil
		delete(t.leases, q)
	}
}

func (t *table) update(q message.Queue, offset int64, increaseOnly bool) {
	t.mu.Lock()
	t.updateLocked(q, offset, increaseOnly)
}

// updateFor is update through l: nothing when l is not its queue's current lease.
func (t *table) updateFor(l Lease, offset int64, increaseOnly bool) {
	if l.l == nil {
		return
	}
	t.mu.Lock()
	if l.l.ended {
		t.mu.Unlock()
		return
	}
	e, made := l.l.e, false
	if e == nil {
		e, made = t.entryLocked(l.l.q)
		l.l.e = e
	}
	t.updateEntryLocked(l.l.q, e, made, offset, increaseOnly)
}

// updateLocked is update with t.mu held; it unlocks it.
func (t *table) updateLocked(q message.Queue, offset int64, increaseOnly bool) {
	e, made := t.entryLocked(q)
	t.updateEntryLocked(q, e, made, offset, increaseOnly)
}

// entryLocked returns q's entry; made is true when q had none and this call made it
// (no offset yet). t.mu is held.
func (t *table) entryLocked(q message.Queue) (e *entry, made bool) {
	if found, ok := t.entries[q]; ok {
		return found, false
	}
	e = &entry{persisted: -1}
	t.entries[q] = e
	return e, true
}

// updateEntryLocked is updateLocked with q's entry e found (made: just made); it
// unlocks t.mu.
func (t *table) updateEntryLocked(q message.Queue, e *entry, made bool, offset int64, increaseOnly bool) {
	if !made && (e.frozen || (increaseOnly && offset <= e.offset)) {
		t.mu.Unlock()
		return
	}
	e.offset = offset
	t.unlockCommit(q, e, true, true)
}

// forgetLocked forgets q's entry, and clears its lease's. t.mu is held.
func (t *table) forgetLocked(q message.Queue) {
	delete(t.entries, q)
	if l, ok := t.leases[q]; ok {
		l.e = nil
	}
}

func (t *table) updateAndFreeze(q message.Queue, offset int64) {
	t.mu.Lock()
	e, _ := t.entryLocked(q)
	e.offset, e.frozen = offset, true
	t.unlockCommit(q, e, true, true)
}

// set stores an offset read from the backing store as already persisted.
func (t *table) set(q message.Queue, offset int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[q]
	if !ok {
		t.entries[q] = &entry{offset: offset, persisted: offset}
		return
	}
	if !e.frozen {
		e.offset, e.persisted = offset, offset
	}
}

func (t *table) get(q message.Queue) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[q]; ok {
		return e.offset, true
	}
	return 0, false
}

// readMemory is the part of Store.Read both stores share: for ReadFromMemory and
// MemoryFirstThenStore the in-memory offset when there is one; for ReadFromMemory
// without one, NoOffset. store is true when the caller must read its backing store.
func (t *table) readMemory(q message.Queue, how ReadType) (off int64, store bool, err error) {
	switch how {
	case ReadFromMemory, MemoryFirstThenStore:
		if off, ok := t.get(q); ok {
			return off, false, nil
		}
		return NoOffset, how == MemoryFirstThenStore, nil
	case ReadFromStore:
		return 0, true, nil
	default:
		return 0, false, fmt.Errorf("offset: unknown read type %d", how)
	}
}

// dirty returns the offsets of qs that changed since their last successful persist; with
// forget, it also forgets the queues not in qs.
func (t *table) dirty(qs []message.Queue, forget bool) map[message.Queue]int64 {
	keep := make(map[message.Queue]struct{}, len(qs))
	for _, q := range qs {
		keep[q] = struct{}{}
	}
	return t.collect(func(q message.Queue) bool { _, ok := keep[q]; return ok }, forget)
}

// changed returns every offset that changed since its last successful persist.
func (t *table) changed() map[message.Queue]int64 { return t.collect(nil, false) }

// collect returns the changed offsets of the queues keep accepts (all, when nil); with
// forget, it forgets the others.
func (t *table) collect(keep func(message.Queue) bool, forget bool) map[message.Queue]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[message.Queue]int64)
	for q, e := range t.entries {
		if keep != nil && !keep(q) {
			if forget {
				t.forgetLocked(q)
			}
			continue
		}
		if e.offset != e.persisted {
			out[q] = e.offset
		}
	}
	return out
}

// markPersisted records that offset was written for q (the local store's file).
func (t *table) markPersisted(q message.Queue, offset int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[q]; ok {
		e.persisted = offset
	}
}

// unfreeze lets Update change q's offset again.
// unfreeze ends a freeze of q's offset, and q's lease.
func (t *table) unfreeze(q message.Queue) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[q]; ok {
		e.frozen = false
	}
	t.endLeaseLocked(q)
}

// remove forgets q's offset, and ends q's lease.
func (t *table) remove(q message.Queue) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forgetLocked(q)
	t.endLeaseLocked(q)
}

func (t *table) snapshot() map[message.Queue]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[message.Queue]int64, len(t.entries))
	for q, e := range t.entries {
		out[q] = e.offset
	}
	return out
}
