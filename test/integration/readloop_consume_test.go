package integration

import (
	"bytes"
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// onReadLoop reports whether the calling goroutine is a connection's read loop (its
// stack passes through the remoting read loop).
func onReadLoop() bool {
	buf := make([]byte, 16<<10)
	return bytes.Contains(buf[:runtime.Stack(buf, false)], []byte("remoting.(*conn).read("))
}

// Listener calls run on the read loops that pulled their messages when they are quick
// enough (a generous bound here: under the race detector and a loaded machine calls
// take tens of microseconds), and never with WithReadLoopConsume(0); either way every
// message is consumed once and the offsets reach the end.
func TestReadLoopConsume(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[on], func(t *testing.T) {
			c := newCluster(t, fakebroker.WithTopic("t", 4), fastDelays())
			want := produce(t, c, "t", "m", 4000, "")
			seen := newTally()
			var onLoop, calls atomic.Int64
			pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithReadLoopConsume(map[bool]time.Duration{true: time.Millisecond}[on])),
				func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
					if calls.Add(1)%16 == 0 && onReadLoop() { // a stack dump is slow: every 16th call
						onLoop.Add(1)
					}
					seen.add(msgs)
					return consumer.ConsumeSuccess
				})
			defer shutdown(t, pc)
			waitFor(t, 30*time.Second, "every message", func() bool { return seen.distinct() == len(want) })
			missing, dups := seen.check(want)
			require.Zero(t, missing)
			require.Zero(t, dups)
			waitOffsetsAtEnd(t, c.Brokers()[0], "g", "t", 4)
			if on {
				require.Positive(t, onLoop.Load(), "no call ran on a read loop")
			} else {
				require.Zero(t, onLoop.Load(), "a call ran on a read loop")
			}
		})
	}
}

// A call on a read loop that blocks does not stop the connection: another goroutine
// takes its reading over, the other queues' messages (and the blocked queue's next
// ones, on workers) keep being consumed, and Shutdown ends cleanly after the call
// returns.
func TestReadLoopConsumeHandsOverABlockedCall(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 2), fastDelays())
	want := produce(t, c, "t", "m", 3000, "")
	seen := newTally()
	var blocked atomic.Bool
	unblocked := make(chan bool, 1) // true: the others were all consumed meanwhile
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithReadLoopConsume(time.Millisecond)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			seen.add(msgs)
			if n := seen.distinct(); n > 100 && n%16 == 0 && !blocked.Load() && onReadLoop() && blocked.CompareAndSwap(false, true) {
				deadline := time.Now().Add(20 * time.Second)
				for seen.distinct() < len(want) && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				unblocked <- seen.distinct() == len(want)
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 30*time.Second, "a call blocked on a read loop", blocked.Load)
	require.True(t, <-unblocked, "the other messages were not consumed while a read loop's call blocked")
	missing, dups := seen.check(want)
	require.Zero(t, missing)
	require.Zero(t, dups)
	waitOffsetsAtEnd(t, c.Brokers()[0], "g", "t", 2)
}
