package integration

import (
	"context"
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
