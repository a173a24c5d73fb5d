package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// A listener stuck on one message: the cache stays within the flow-control threshold
// plus one pull batch, the offset waits at the stuck message, and the consume timeout
// sends it back so the offset moves on.
func TestBlockedListenerFlowControlAndConsumeTimeout(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	produce(t, c, "t", "m", 500, "")
	release := make(chan struct{})
	var consumed atomic.Int64
	var maxCached atomic.Int64
	pcRef := atomic.Pointer[consumer.PushConsumer]{}
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c,
		consumer.WithPullThresholdForQueue(100), consumer.WithConsumeTimeout(time.Second)),
		func(ctx context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if p := pcRef.Load(); p != nil {
				for _, qs := range p.Stats().Queues {
					if qs.CachedMsgs > maxCached.Load() {
						maxCached.Store(qs.CachedMsgs)
					}
				}
			}
			if string(msgs[0].Body) == "m-10" && msgs[0].ReconsumeTimes == 0 {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return consumer.ConsumeSuccess
			}
			consumed.Add(1)
			return consumer.ConsumeSuccess
		})
	pcRef.Store(pc)
	defer shutdown(t, pc)
	defer close(release)

	waitFor(t, 10*time.Second, "the queue to fill past the stuck message", func() bool { return consumed.Load() >= 100 })
	require.LessOrEqual(t, maxCached.Load(), int64(100+32), "flow control: threshold plus one pull batch")
	off, _ := b.CommittedOffset("g", "t", 0)
	require.LessOrEqual(t, off, int64(10), "the offset waits at the stuck message")

	// After the 1 s consume timeout the stuck message is sent back and comes back from
	// the retry topic; the offset passes it.
	waitFor(t, 15*time.Second, "the offset to move past the stuck message", func() bool {
		off, _ := b.CommittedOffset("g", "t", 0)
		return off == 500
	})
	waitFor(t, 10*time.Second, "the stuck message's retry", func() bool { return consumed.Load() == 500 })
	require.Len(t, c.RetryMessages("g"), 1)
}

// Broadcasting: a listener call past the consume timeout drops its message (broadcasting
// never retries), so the offset moves on instead of waiting at it for ever.
func TestBroadcastingConsumeTimeoutMovesTheOffsetOn(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	produce(t, c, "t", "m", 50, "")
	release := make(chan struct{})
	var consumed atomic.Int64
	pc := startConsumer(t, "bg", "t", consumer.All(), fastOptions(c,
		consumer.WithMessageModel(consumer.Broadcasting), consumer.WithOffsetStoreDir(t.TempDir()),
		consumer.WithConsumeTimeout(time.Second)),
		func(ctx context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if string(msgs[0].Body) == "m-10" {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return consumer.ConsumeSuccess
			}
			consumed.Add(1)
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	defer close(release)
	q := message.Queue{Topic: "t", BrokerName: c.Brokers()[0].Name(), QueueID: 0}
	waitFor(t, 10*time.Second, "every other message", func() bool { return consumed.Load() == 49 })
	require.Equal(t, int64(10), pc.Stats().Queues[q].CommittedOffset, "the offset waits at the stuck message")
	waitFor(t, 10*time.Second, "the offset to move past the stuck message", func() bool {
		return pc.Stats().Queues[q].CommittedOffset == 50
	})
	require.Empty(t, c.RetryMessages("bg"), "nothing is sent back")
}
