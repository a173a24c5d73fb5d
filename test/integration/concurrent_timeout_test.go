package integration

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// sweepHoldHook holds the timeout sweep inside its first send-back's hook until hold
// says to go on, and counts the send-backs that reached the broker.
type sweepHoldHook struct {
	sent   atomic.Int32
	inHook chan struct{} // closed when the first send-back's hook runs
	hold   func() bool   // true once the sweep may go on
}

func (h *sweepHoldHook) OnSendBack(e consumer.SendBackEvent) {
	if e.Err != nil || h.sent.Add(1) != 1 {
		return
	}
	close(h.inHook)
	for deadline := time.Now().Add(10 * time.Second); !h.hold() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

// A listener call that returns Success while the consume-timeout sweep is sending its
// messages back has consumed them: the sweep, which picked them before, must check each
// is still cached just before its own send-back, or the consumed messages are delivered
// again. The sweep is held in its first send-back until the call's result moved the
// offset past all four, so the order is fixed and no timing decides the outcome.
func TestSweepSkipsMessagesConsumedMeanwhile(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	produce(t, c, "t", "m", 4, "")
	h := &sweepHoldHook{inHook: make(chan struct{})}
	h.hold = func() bool { off, ok := b.CommittedOffset("g", "t", 0); return ok && off >= 4 }
	var calls atomic.Int32
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c,
		consumer.WithHooks(h),
		consumer.WithConsumeMessageBatchMaxSize(4), consumer.WithPullBatchSize(4),
		consumer.WithConsumeTimeout(time.Second)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if calls.Add(1) == 1 {
				<-h.inHook // the sweep sent the first message back and waits
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "the call's result committed", h.hold)
	// The sweep goes on now; the next send-back, if any, follows at once.
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, 1, b.Requests(protocol.RequestConsumerSendMsgBack), "send-backs of messages already consumed")
}

// Stats count a ConsumeSuccess call with the AckIndex clamped to the batch, as its
// result is applied: the raw math.MaxInt (meaning "all", as the default MaxInt32 does)
// overflowed, and a value below -1 made the counts negative.
func TestStatsClampAckIndex(t *testing.T) {
	for _, ack := range []int{math.MaxInt, -3} {
		t.Run("", func(t *testing.T) {
			c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
			produce(t, c, "t", "m", 1, "")
			requireClampedStats(t, ack, "t", func(fn listenerFunc) *consumer.PushConsumer {
				return startConsumer(t, "g", "t", consumer.All(), fastOptions(c), fn)
			})
		})
	}
}

// listenerFunc is a concurrent listener as a function.
type listenerFunc = func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus

// requireClampedStats starts a consumer with start, its first call returning success
// with AckIndex ack, and checks that topic's stats count that call within its batch.
func requireClampedStats(t *testing.T, ack int, topic string, start func(listenerFunc) *consumer.PushConsumer) {
	t.Helper()
	var calls atomic.Int32
	pc := start(func(_ context.Context, msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		if calls.Add(1) == 1 {
			cc.AckIndex = ack
		}
		return consumer.ConsumeSuccess
	})
	defer shutdown(t, pc)
	var ts consumer.TopicStats
	waitFor(t, 10*time.Second, "the first call counted", func() bool {
		ts = pc.Stats().Topics[topic]
		return ts.ConsumedMsgs+ts.ConsumeFailedMsgs >= 1
	})
	t.Logf("ack %d: consumed %d failed %d", ack, ts.ConsumedMsgs, ts.ConsumeFailedMsgs)
	require.GreaterOrEqual(t, ts.ConsumedMsgs, int64(0))
	require.GreaterOrEqual(t, ts.ConsumeFailedMsgs, int64(0))
	require.LessOrEqual(t, ts.ConsumedMsgs+ts.ConsumeFailedMsgs, int64(calls.Load()))
}

// fallbackHook counts the fallback send-backs that worked, and those of them reported
// dead-lettered.
type fallbackHook struct{ dead, fallback atomic.Int32 }

func (h *fallbackHook) OnSendBack(e consumer.SendBackEvent) {
	if e.Err == nil && e.Fallback {
		h.fallback.Add(1)
		if e.DeadLetter {
			h.dead.Add(1)
		}
	}
}

// DelayLevelWhenNextConsume -1 with a failed CONSUMER_SEND_MSG_BACK: the fallback puts a
// copy in the retry topic (as Java, whose fallback ignores the delay level), so the hook
// must not report it dead-lettered.
func TestHookDeadLetterOnFallback(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	_, err := b.Inject(fakebroker.Fault{Code: protocol.RequestConsumerSendMsgBack, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	produce(t, c, "t", "m", 1, "")
	h := &fallbackHook{}
	var calls atomic.Int32
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithHooks(h)),
		func(_ context.Context, msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if calls.Add(1) == 1 {
				cc.DelayLevelWhenNextConsume = -1
				return consumer.ReconsumeLater
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "the fallback", func() bool { return h.fallback.Load() == 1 })
	waitFor(t, 10*time.Second, "the copy", func() bool { return len(c.RetryMessages("g")) == 1 })
	require.Empty(t, c.DLQMessages("g"))
	require.Zero(t, h.dead.Load(), "hook said DeadLetter but the copy went to the retry topic")
}

// The timeout sweep's send-backs run on a goroutine of their own, as Java's
// cleanExpiredMsg runs on its own scheduled thread: on the consume workers, a stuck
// message waited behind the stuck listener call itself, and with every worker stuck it
// was never sent back.
func TestSweepRunsWhileWorkersStuck(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	produce(t, c, "t", "m", 1, "")
	release := make(chan struct{})
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c,
		consumer.WithConsumeGoroutineNums(1), consumer.WithConsumeTimeout(time.Second)),
		func(ctx context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	defer close(release)
	waitFor(t, 10*time.Second, "the stuck message sent back after the consume timeout", func() bool {
		return b.Requests(protocol.RequestConsumerSendMsgBack) > 0
	})
}

// A failed call's message is out of its call while the worker sends it back: a
// consume-timeout sweep that comes while that send-back takes longer than the timeout
// (2.5 s here against 1 s, so at least one sweep falls in it) does not send it back a
// second time.
func TestNoTimeoutSendBackDuringTheWorkersOwn(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays(),
		fakebroker.WithLag(fakebroker.Lag{Code: protocol.RequestConsumerSendMsgBack, Min: 2500 * time.Millisecond, Max: 2500 * time.Millisecond}))
	b := c.Brokers()[0]
	want := produce(t, c, "t", "m", 8, "")
	failed := want[3]
	seen := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithConsumeTimeout(time.Second)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if seen.addOne(msgs[0]) == 1 && string(msgs[0].Body) == failed {
				return consumer.ReconsumeLater
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 20*time.Second, "the failed message back", func() bool { return seen.count(failed) == 2 })
	waitOffsetsAtEnd(t, b, "g", "t", 1)
	seen.requireOnceBut(t, failed)
	require.Equal(t, 1, b.Requests(protocol.RequestConsumerSendMsgBack), "one send-back: the worker's")
}
