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

// HeldBodies keeps each answer's buffer until the commits pass its last message: a
// commit inside an answer keeps it, one past it returns it to the pool; a lease held
// for messages the commits have passed already takes no reference.
func TestHeldBodiesReleaseByOffset(t *testing.T) {
	var p bodyPool
	var h HeldBodies
	first, second := newLease(&p, p.Body(100)), newLease(&p, p.Body(5000))
	h.Hold(first, 41) // offsets 10..41
	h.Hold(second, 73)
	first.Release() // the service's own references, after dispatching
	second.Release()
	require.Zero(t, p.freeBytes, "both held")

	h.ReleaseBelow(41)
	require.Zero(t, p.freeBytes, "offset 41 not consumed yet")
	h.ReleaseBelow(42)
	require.Equal(t, bodyClassMin, p.freeBytes, "the first answer is back")
	h.ReleaseBelow(30) // an older commit changes nothing
	require.Equal(t, bodyClassMin, p.freeBytes)

	// An answer whose messages were consumed before its lease was held: none taken.
	late := newLease(&p, p.Body(100))
	h.Hold(late, 41)
	late.Release()
	require.Equal(t, bodyClassMin, p.freeBytes, "back at once")

	h.ReleaseBelow(100)
	require.Equal(t, bodyClassMin+8<<10, p.freeBytes)
	require.Empty(t, h.held)
	h.Hold(nil, 120) // bodies not lent
	require.Empty(t, h.held)
}
