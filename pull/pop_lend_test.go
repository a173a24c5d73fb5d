package pull

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

// freeBytesNow returns the bytes of the pool's free buffers.
func (p *bodyPool) freeBytesNow() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.freeBytes
}

// With LendBodies a pop's buffer goes back to the pool once every message dispatched
// from it has had its result applied: an answer whose messages are all filtered out at
// once; acks, retries and abandons hold it no longer than their Apply; a dead-letter
// send reads the body, and holds it until it returns, also when it runs later on
// another goroutine because an extension was in flight when the listener call ended.
func TestPopLentBodiesHeldUntilEveryResultIsApplied(t *testing.T) {
	sent := make(chan *message.Ext, 1)
	proceed := make(chan struct{})
	h := newPopHarness(t, func(c *PopConfig) {
		c.LendBodies = true
		c.InvisibleTime = time.Second
		c.Subs = subs{"t": {Topic: "t", SubString: "a", ExpressionType: "TAG", TagsSet: []string{"a"}}}
		c.DeadLetter = func(m *message.Ext) bool {
			sent <- m
			<-proceed
			return true
		}
	})
	letGo := sync.OnceFunc(func() { close(proceed) })
	t.Cleanup(letGo) // before the harness's: a failed check must not leave the send waiting
	pool := h.svc.bodies
	h.svc.Submit(h.req)
	popFound(t, h.nextPop(t), 0, 2, "b") // another tag: acked, nothing dispatched
	require.Equal(t, bodyClassMin, pool.freeBytesNow(), "a filtered answer's buffer is back at once")

	popFound(t, h.nextPop(t), 2, 6, "a") // into the same buffer
	b := <-h.disp.batches
	require.Zero(t, pool.freeBytesNow(), "lent to the batch")
	for i, m := range b.Msgs() {
		require.Equal(t, "m"+string(rune('2'+i)), string(m.Body))
	}
	h.svc.Apply(h.req, b, 0, processqueue.PopActionAck, 0)
	h.svc.Apply(h.req, b, 1, processqueue.PopActionRetry, 10*time.Second)
	h.svc.Apply(h.req, b, 2, processqueue.PopActionAbandon, 0)
	require.Zero(t, pool.freeBytesNow(), "message 3 still holds it")

	// Message 3's listener call ends while an extension of its invisible time is in
	// flight: its dead-letter send runs when the extension ends, on another goroutine.
	h.broker.mu.Lock()
	h.broker.holding = true
	h.broker.mu.Unlock()
	h.svc.Extend(b.Entry(3).Deadline.Add(-300 * time.Millisecond))
	require.Equal(t, int64(1), h.svc.Counters().Extended.Load())
	h.svc.Apply(h.req, b, 3, processqueue.PopActionDLQ, time.Minute)
	require.Zero(t, pool.freeBytesNow())
	h.broker.release()
	var m *message.Ext
	select {
	case m = <-sent:
	case <-time.After(5 * time.Second):
		t.Fatal("no dead-letter send")
	}
	require.Equal(t, "m5", string(m.Body))
	require.Zero(t, pool.freeBytesNow(), "held while the dead-letter send reads the body")
	letGo()
	require.Eventually(t, func() bool { return pool.freeBytesNow() == bodyClassMin }, 5*time.Second, time.Millisecond,
		"back once the last result is applied")
	require.Eventually(t, func() bool { return h.svc.Counters().DeadLettered.Load() == 1 }, 5*time.Second, time.Millisecond)
}
