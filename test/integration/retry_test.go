package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// fastDelays makes every delay level 10 ms long.
func fastDelays() fakebroker.Opt {
	levels := make([]time.Duration, 18)
	for i := range levels {
		levels[i] = 10 * time.Millisecond
	}
	return fakebroker.WithDelayLevels(levels...)
}

func TestAckIndexSendsBackOnlyTheRest(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	want := produce(t, c, "t", "m", 8, "")
	var mu sync.Mutex
	var first []string
	again := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c,
		consumer.WithConsumeMessageBatchMaxSize(8), consumer.WithPullBatchSize(8)),
		func(_ context.Context, msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if msgs[0].ReconsumeTimes > 0 {
				again.add(msgs)
				return consumer.ConsumeSuccess
			}
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				first = append(first, string(m.Body))
			}
			cc.AckIndex = 3
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 20*time.Second, "the retried messages", func() bool { return again.distinct() == 4 })
	mu.Lock()
	require.Equal(t, want, first, "one batch of 8")
	mu.Unlock()
	missing, dups := again.check(want[4:])
	require.Zero(t, missing, "messages 4-7 came back")
	require.Zero(t, dups)
	require.Equal(t, 4, again.distinct(), "and only those")
	b := c.Brokers()[0]
	require.Equal(t, 4, b.Requests(protocol.RequestConsumerSendMsgBack))
	waitFor(t, 10*time.Second, "offset at the end", func() bool {
		off, _ := b.CommittedOffset("g", "t", 0)
		return off == 8
	})
}

func TestReconsumeLaterEndsInTheDLQ(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 2), fastDelays())
	want := produce(t, c, "t", "poison", 3, "")
	calls := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithMaxReconsumeTimes(3)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			calls.add(msgs)
			require.Equal(t, "t", msgs[0].Topic, "the retry topic's name is reset before the listener")
			return consumer.ReconsumeLater
		})
	defer shutdown(t, pc)
	waitFor(t, 30*time.Second, "three dead letters", func() bool { return len(c.DLQMessages("g")) == 3 })
	calls.mu.Lock()
	for _, w := range want {
		require.Equal(t, 4, calls.counts[w], "1 delivery + 3 retries of %s", w)
	}
	calls.mu.Unlock()
	for _, m := range c.DLQMessages("g") {
		require.True(t, strings.HasPrefix(string(m.Body), "poison-"))
	}
}

func TestSendBackFallbackAndLocalRetry(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	// Send-back fails: the fallback sends the message to the retry topic instead.
	_, err := b.Inject(fakebroker.Fault{Code: protocol.RequestConsumerSendMsgBack, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	want := produce(t, c, "t", "m", 1, "")
	deliveries := newTally()
	// The second delivery (from the retry topic) fails too, but only once the test has
	// made the fallback fail as well: its result must not race the test's checks (under
	// load the retried message came back, failed and was sent back a second time
	// before the test looked, every few runs).
	fallbackFails := make(chan struct{})
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			deliveries.add(msgs)
			switch deliveries.deliveries() {
			case 1:
				return consumer.ReconsumeLater
			case 2:
				<-fallbackFails
				return consumer.ReconsumeLater
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 20*time.Second, "the retried message", func() bool { return deliveries.deliveries() >= 2 },
		func() string {
			return fmt.Sprintf("(deliveries %d, retry topic holds %d, broker requests %v, consumer %+v)",
				deliveries.deliveries(), len(c.RetryMessages("g")), b.RequestCounts(), pc.Stats())
		})
	require.Positive(t, b.Requests(protocol.RequestSendMessageV2), "the fallback sent it to the retry topic")
	retry := c.RetryMessages("g")
	require.Len(t, retry, 1)
	require.Equal(t, "t", retry[0].Property(message.PropertyRetryTopic))
	require.Equal(t, int32(1), retry[0].ReconsumeTimes)
	require.Equal(t, want[0], string(retry[0].Body))

	// Both fail: the message stays and is consumed again locally; the offset waits.
	_, err = b.Inject(fakebroker.Fault{Code: protocol.RequestSendMessageV2, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	close(fallbackFails)
	waitFor(t, 20*time.Second, "a local retry", func() bool { return deliveries.deliveries() >= 3 })
	require.Equal(t, 3, deliveries.deliveries())
	require.Equal(t, 1, deliveries.distinct())
	require.Len(t, c.RetryMessages("g"), 1, "the second fallback failed: nothing more in the retry topic")
}

func TestLocalRetryHoldsTheOffset(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	_, err := b.Inject(fakebroker.Fault{Code: protocol.RequestConsumerSendMsgBack, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	_, err = b.Inject(fakebroker.Fault{Code: protocol.RequestSendMessageV2, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	produce(t, c, "t", "m", 5, "")
	var mu sync.Mutex
	seen := map[string]int{}
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			mu.Lock()
			defer mu.Unlock()
			body := string(msgs[0].Body)
			seen[body]++
			if body == "m-2" && seen[body] == 1 {
				return consumer.ReconsumeLater
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "the other messages", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 5 })
	// Persists run every 200 ms: wait for one to write 2 (a loaded machine may take longer
	// than a few periods), then see that it stays there for a few more.
	waitFor(t, 4*time.Second, "the offset to reach the message being retried locally", func() bool {
		off, _ := b.CommittedOffset("g", "t", 0)
		return off == 2
	})
	time.Sleep(500 * time.Millisecond)
	off, _ := b.CommittedOffset("g", "t", 0)
	require.Equal(t, int64(2), off, "the offset stops at the message being retried locally")
	waitFor(t, 15*time.Second, "the local retry after 5s", func() bool { mu.Lock(); defer mu.Unlock(); return seen["m-2"] == 2 })
	waitFor(t, 5*time.Second, "the offset to move on", func() bool {
		off, _ := b.CommittedOffset("g", "t", 0)
		return off == 5
	})
}
