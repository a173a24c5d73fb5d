package pull

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

func TestBodyClass(t *testing.T) {
	for _, tt := range []struct {
		n, class int
		ok       bool
	}{
		{1, 0, true}, {4096, 0, true}, {4097, 1, true}, {8192, 1, true}, {10 << 10, 2, true},
		{38 << 10, 4, true}, {1 << 20, 8, true}, {1<<20 + 1, 0, false},
	} {
		c, ok := bodyClass(tt.n)
		require.Equal(t, tt.ok, ok, "n %d", tt.n)
		if ok {
			require.Equal(t, tt.class, c, "n %d", tt.n)
			require.GreaterOrEqual(t, bodyClassMin<<c, tt.n)
		}
	}
}

// The pool lends a buffer of the length asked for with its class's capacity, lends a
// returned one again, refuses sizes above the largest class, takes back only buffers
// of a class's capacity, and keeps at most bodyPoolMaxFree bytes.
func TestBodyPool(t *testing.T) {
	var p bodyPool
	b := p.Body(5000)
	require.Len(t, b, 5000)
	require.Equal(t, 8<<10, cap(b))
	p.put(b)
	again := p.Body(6000)
	require.Same(t, &b[0], &again[0], "the free buffer of the class is lent again")
	require.Len(t, again, 6000)
	require.NotSame(t, &again[0], &p.Body(6000)[0], "a buffer lent is not lent twice")

	require.Nil(t, p.Body(bodyClassMax+1))
	require.Nil(t, p.Body(0))
	p.put(make([]byte, 5000)) // no class's capacity
	require.Zero(t, p.freeBytes)

	for range 2 * bodyPoolMaxFree / bodyClassMax {
		p.put(make([]byte, 0, bodyClassMax))
	}
	require.Equal(t, bodyPoolMaxFree, p.freeBytes, "bounded")
}

func TestLeaseReturnsItsBufferOnTheLastRelease(t *testing.T) {
	var p bodyPool
	buf := p.Body(100)
	l := newLease(&p, buf)
	l.Acquire(2)
	l.Release()
	l.Release()
	require.Zero(t, p.freeBytes, "a reference is still held")
	l.Release()
	require.Equal(t, bodyClassMin, p.freeBytes)
	require.Panics(t, l.Release, "released more often than acquired")
	spent := newLease(&p, p.Body(100))
	spent.Release()
	require.Panics(t, func() { spent.Acquire(1) }, "acquired once its buffer went back")

	var none *Lease // bodies not lent
	none.Acquire(3)
	none.Release()
}

// With LendBodies, a pull carries the service's pool as its BodySource; the messages
// decoded from the lent answer keep their topic and properties when the buffer is
// reused, and the buffer goes back to the pool only when the dispatcher's reference is
// released as well as the service's.
func TestLentBodiesGoBackToThePoolWhenDispatchReleases(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LendBodies = true })
	pq := processqueue.New(time.Now())
	h.svc.Submit(NewRequest(testQueue, pq, 10))

	c := h.nextCall(t)
	require.NotNil(t, c.src, "the pull lends")
	b := body(t, "t", 10, 12, "a", message.Property{Name: "k", Value: "v"})
	lent := c.src.Body(len(b))
	copy(lent, b) // as the read loop reads the answer into it
	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 12, MaxOffset: 20, Body: lent}, nil)
	<-h.disp.seen
	next := h.nextCall(t)

	h.disp.mu.Lock()
	msgs, lease := h.disp.got, h.disp.leases[0]
	h.disp.mu.Unlock()
	require.Len(t, msgs, 2)
	require.Equal(t, "m10", string(msgs[0].Body))
	require.Same(t, &lent[bytes.Index(lent, []byte("m10"))], &msgs[0].Body[0], "bodies slice into the lent buffer")

	other := next.src.Body(len(b))
	require.NotSame(t, &lent[0], &other[0], "not back while the dispatcher holds it")
	lease.Release()
	again := next.src.Body(len(b))
	require.Same(t, &lent[0], &again[0], "back in the pool")
	for i := range again {
		again[i] = 'x' // the next answer
	}
	for i, m := range msgs {
		require.Equal(t, "t", m.Topic, "message %d", i)
		require.Equal(t, "v", m.Property("k"), "message %d", i)
		require.Equal(t, "a", m.Tags(), "message %d", i)
	}
}

// An answer whose every message is filtered out dispatches nothing: its buffer is the
// pool's again at once.
func TestLentBodyOfAFilteredAnswerGoesBackAtOnce(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LendBodies = true })
	pq := processqueue.New(time.Now())
	h.svc.Submit(NewRequest(testQueue, pq, 10))
	c := h.nextCall(t)
	b := body(t, "t", 10, 14, "zzz") // subscribed: a || b
	lent := c.src.Body(len(b))
	copy(lent, b)
	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 14, MaxOffset: 20, Body: lent}, nil)
	next := h.nextCall(t)
	again := next.src.Body(len(b))
	require.Same(t, &lent[0], &again[0])
	require.Zero(t, pq.Count())
}

// heldAnswer puts an answer of messages at offsets through h, holding a new lease as the
// service does, and drops the service's own reference.
func heldAnswer(h *HeldBodies, p *bodyPool, pq *processqueue.ProcessQueue, offsets ...int64) *Lease {
	l := newLease(p, p.Body(100))
	msgs := make([]*message.Ext, len(offsets))
	for i, o := range offsets {
		msgs[i] = &message.Ext{QueueOffset: o}
	}
	h.put(pq, msgs, -1, l)
	l.Release()
	return l
}

// HeldBodies keeps each answer's buffer until a commit passes all its messages, also for
// answers a broker should not send: one below the committed offset (cached again, and
// consumed again) and one with a stray high offset, after which later answers are still
// held.
func TestHeldBodiesReleaseOnCommit(t *testing.T) {
	var p bodyPool
	var h HeldBodies
	pq := processqueue.New(time.Now())
	free := func() int { return p.freeBytes / bodyClassMin }
	commit := func(take int) int64 {
		t.Helper()
		require.Len(t, pq.Take(take), take)
		off, ok := h.Commit(pq)
		require.True(t, ok)
		return off
	}

	heldAnswer(&h, &p, pq, 10, 11)
	heldAnswer(&h, &p, pq, 12, 13)
	require.Zero(t, free(), "both held")
	require.Equal(t, int64(11), commit(1))
	require.Zero(t, free(), "offset 11 still cached")
	require.Equal(t, int64(12), commit(1))
	require.Equal(t, 1, free(), "the first answer is back")

	heldAnswer(&h, &p, pq, 10, 11) // stale: below the committed offset, cached again
	require.Zero(t, free(), "held while cached")
	require.Equal(t, int64(12), commit(2))
	require.Equal(t, 1, free(), "back once committed again")

	heldAnswer(&h, &p, pq, 14, 99999) // a stray offset
	require.Equal(t, int64(100000), commit(4))
	require.Equal(t, 2, free())
	heldAnswer(&h, &p, pq, 15, 16) // after it, still held
	require.Equal(t, 1, free())
	require.Equal(t, int64(17), commit(2))
	require.Equal(t, 2, free())
	require.Empty(t, h.held)

	_, ok := h.Commit(pq)
	require.False(t, ok, "nothing taken")
	added, _ := h.put(pq, []*message.Ext{{QueueOffset: 20}}, -1, nil) // bodies not lent
	require.Len(t, added, 1)
	require.Empty(t, h.held)
}
