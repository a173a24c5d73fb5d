package pull

import (
	"math/bits"
	"sync"
	"sync/atomic"
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
// messages to consume them later). A reference never released (a consumer shut down
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

// HeldBodies keeps the leases of one queue's answers for a consumer that consumes the
// queue in offset order and lets go of its messages by offset, as orderly consumption
// does: a body may be read until the queue's consumption passes its message, across as
// many listener calls as that takes (a suspended batch is consumed again later). The
// Dispatcher holds each answer's lease for the messages it cached; the consumer releases
// them as it commits. The zero value is ready to use; it is safe for concurrent use.
//
// A queue dropped with leases held keeps them: they go to the garbage collector with
// the queue's Request, not back to the pool.
type HeldBodies struct {
	mu   sync.Mutex
	held []heldLease // in the order held, which is the order of the queue's answers
	// passed is the highest offset given to ReleaseBelow: every message below it is
	// consumed, and nothing reads its body again.
	passed int64
}

// heldLease is one answer's lease, held for its messages up to offset last.
type heldLease struct {
	lease *Lease
	last  int64
}

// Hold takes a reference on l for messages up to offset last, released once the
// queue's consumption passes last. When it has passed last already (the messages were
// consumed while the caller still held its own reference), none is taken.
func (h *HeldBodies) Hold(l *Lease, last int64) {
	if l == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if last < h.passed {
		return
	}
	l.Acquire(1)
	h.held = append(h.held, heldLease{lease: l, last: last})
}

// ReleaseBelow releases the leases held for messages all below offset: the queue's
// consumption has passed them. Leases are released in the order held, so one held for
// later offsets than the next waits for it.
func (h *HeldBodies) ReleaseBelow(offset int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.passed = max(h.passed, offset)
	k := 0
	for ; k < len(h.held) && h.held[k].last < h.passed; k++ {
		h.held[k].lease.Release()
		h.held[k] = heldLease{}
	}
	h.held = h.held[k:]
}
