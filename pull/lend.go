package pull

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

// Lent bodies (Config.LendBodies). A pull's answer is read off the connection into a
// buffer of the service's pool instead of a new allocation, its messages' bodies slice
// into that buffer, and the buffer goes back to the pool once nothing can read them any
// more: when the listener calls on those messages, their send-backs and their removal
// from the ProcessQueue are over. Everything else of a message (topic, properties, ids)
// is copied out of the buffer when the answer is decoded, so only Body is lent.
//
// The answer's Lease counts who still reads the bodies: the service holds one
// reference while it decodes, caches and dispatches the answer, and the Dispatcher
// takes one for each listener call it queues (and for anything else that keeps the
// messages to consume them later). A pop's answer (PopConfig.LendBodies) holds one
// reference for each message dispatched, released once its result is applied
// (pop_ack.go): after its ack, retry delay or abandonment is sent, or, for a dead
// letter, after the send and its hooks return. A reference never released (a consumer shut down
// with calls queued) only leaves the buffer to the garbage collector: the pool holds
// free buffers, never counts those lent, so nothing leaks and nothing waits.

// Body pool size classes: powers of two from bodyClassMin to bodyClassMax. A pull of 32
// messages of 128 B is about 10 KiB, of 1 KiB about 38 KiB; larger answers are
// allocated as usual.
const (
	bodyClassMin = 4 << 10
	bodyClassMax = 1 << 20
	bodyClasses  = 9 // log2(bodyClassMax / bodyClassMin) + 1

	// bodyPoolMaxFree bounds the bytes of the free buffers a pool keeps: enough for the
	// answers of every queue a consumer typically pulls at once to be read into reused
	// memory, and little against the 100 MiB per queue the cache may hold by default.
	bodyPoolMaxFree = 8 << 20
)

// bodyPool lends the buffers pull answers are read into: a free list per size class,
// bounded in bytes. It is the service's remoting.BodySource.
type bodyPool struct {
	mu        sync.Mutex
	free      [bodyClasses][][]byte
	freeBytes int
}

// bodyClass returns the size class of a buffer for n bytes, and false when n is larger
// than the largest class.
func bodyClass(n int) (class int, ok bool) {
	if n > bodyClassMax {
		return 0, false
	}
	if n <= bodyClassMin {
		return 0, true
	}
	return bits.Len(uint(n-1)) - bits.Len(uint(bodyClassMin-1)), true
}

// Body lends a buffer for an answer body of n bytes: a free one of its class, or a new
// one with the class's capacity. Answers larger than the largest class get nil: they are
// allocated as usual (and taken into the pool when released, if they fit a class).
func (p *bodyPool) Body(n int) []byte {
	c, ok := bodyClass(n)
	if !ok || n <= 0 {
		return nil
	}
	p.mu.Lock()
	if k := len(p.free[c]); k > 0 {
		b := p.free[c][k-1]
		p.free[c][k-1] = nil
		p.free[c] = p.free[c][:k-1]
		p.freeBytes -= cap(b)
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	return make([]byte, n, bodyClassMin<<c)
}

// put takes b back, unless its capacity is no class's or the pool holds enough.
func (p *bodyPool) put(b []byte) {
	c, ok := bodyClass(cap(b))
	if !ok || cap(b) != bodyClassMin<<c {
		return
	}
	p.mu.Lock()
	if p.freeBytes+cap(b) <= bodyPoolMaxFree {
		p.free[c] = append(p.free[c], b[:0])
		p.freeBytes += cap(b)
	}
	p.mu.Unlock()
}

// Lease is a pull answer's body buffer on loan to what reads its messages' bodies. It
// goes back to its pool when the last reference is released. A nil *Lease (bodies not
// lent) ignores both calls.
type Lease struct {
	refs atomic.Int32
	buf  []byte
	pool *bodyPool
}

// newLease returns the lease of buf, with one reference: the caller's.
func newLease(pool *bodyPool, buf []byte) *Lease {
	l := &Lease{buf: buf, pool: pool}
	l.refs.Store(1)
	return l
}

// Acquire adds n references, for n holders of the messages to come (listener calls
// queued). The caller holds a reference itself, so the count cannot reach zero meanwhile;
// acquiring on a lease already returned to the pool is a bug, and panics.
func (l *Lease) Acquire(n int) {
	if l != nil && l.refs.Add(int32(n)) <= int32(n) {
		panic("pull: Lease acquired after its buffer went back to the pool")
	}
}

// Release drops one reference; the last returns the buffer to the pool, after which no
// body of the answer may be read. Releasing more references than were taken is a bug,
// and panics.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	switch n := l.refs.Add(-1); {
	case n == 0:
		buf := l.buf
		l.buf = nil
		l.pool.put(buf)
	case n < 0:
		panic("pull: Lease released more often than acquired")
	}
}

// HeldBodies keeps the lent bodies of one queue consumed in order. An orderly batch is
// taken from the cache across answers and may be consumed again after a suspend, so a
// listener call's end is not when its bodies are free: the commit that takes its
// messages off the ProcessQueue is. The service caches an answer and holds its lease in
// one step (put); the consumer commits and releases the leases whose messages the
// commit passed in one step (Commit). Being atomic against each other, a commit never
// releases the lease of a message cached after it, whatever offsets a broker sends.
// The zero value is ready to use; it is safe for concurrent use.
//
// A queue dropped with leases held keeps them: they go to the garbage collector with
// the queue's Request, not back to the pool.
type HeldBodies struct {
	mu   sync.Mutex
	held []heldLease
}

// heldLease is one answer's lease, held for its cached messages up to offset last.
type heldLease struct {
	lease *Lease
	last  int64
}

// put is pq.Put holding l, when it is not nil, for the messages Put added.
func (h *HeldBodies) put(pq *processqueue.ProcessQueue, msgs []*message.Ext, brokerMax int64, l *Lease) (added []*message.Ext, dispatch bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	added, dispatch = pq.Put(msgs, brokerMax)
	if l != nil && len(added) > 0 {
		last := added[0].QueueOffset // in offset order from a sane broker; not relied on
		for _, m := range added[1:] {
			last = max(last, m.QueueOffset)
		}
		l.Acquire(1)
		h.held = append(h.held, heldLease{lease: l, last: last})
	}
	return added, dispatch
}

// Commit is pq.Commit (see there), releasing the leases held for messages all below the
// committed offset: Commit leaves none of them in pq, and none can be cached meanwhile.
func (h *HeldBodies) Commit(pq *processqueue.ProcessQueue) (offset int64, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	offset, ok = pq.Commit()
	if !ok || len(h.held) == 0 {
		return offset, ok
	}
	kept := h.held[:0]
	for _, hl := range h.held {
		if hl.last < offset {
			hl.lease.Release()
		} else {
			kept = append(kept, hl)
		}
	}
	clear(h.held[len(kept):])
	h.held = kept
	return offset, ok
}
