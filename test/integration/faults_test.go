package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// Brokers restarted, killed and connections dropped mid-stream: nothing is lost.
func TestBrokerRestartKillAndDroppedConnections(t *testing.T) {
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("t", 4))
	const n = 6000
	want := produce(t, c, "t", "m", n/2, "")
	got := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithConsumeGoroutineNums(4)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			time.Sleep(200 * time.Microsecond)
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	a, b := c.Brokers()[0], c.Brokers()[1]

	waitFor(t, 20*time.Second, "some progress", func() bool { return got.distinct() > 500 })
	a.Stop() // a clean restart, data kept
	require.NoError(t, a.Start())
	b.CloseConnections()
	waitFor(t, 20*time.Second, "more progress", func() bool { return got.distinct() > 1500 })
	b.Kill() // connections dropped without goodbye
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, b.Start())
	want = append(want, produce(t, c, "t", "late", n/2, "")...)
	a.CloseConnections()
	waitFor(t, 60*time.Second, "every message", func() bool { return got.distinct() == n })
	missing, dups := got.check(want)
	t.Logf("%d messages through a restart, a kill and dropped connections: %d missing, %d duplicates", n, missing, dups)
	require.Zero(t, missing)
}

// Pulls failing with SYSTEM_BUSY and FLOW_CONTROL for a while: consumption resumes.
func TestPullErrorsFromTheBroker(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 2))
	b := c.Brokers()[0]
	_, err := b.Inject(fakebroker.Fault{Code: protocol.RequestPullMessage, Fail: protocol.ResponseSystemBusy, Times: 3})
	require.NoError(t, err)
	_, err = b.Inject(fakebroker.Fault{Code: protocol.RequestPullMessage, Fail: protocol.ResponseFlowControl, Times: 20})
	require.NoError(t, err)
	want := produce(t, c, "t", "m", 200, "")
	got := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == len(want) })
}

// Shutdown under load: what the broker has committed equals what was consumed (no
// message consumed beyond the committed offset, none committed that was not consumed),
// and the broker saw the consumer unregister.
func TestShutdownUnderLoadCommitsExactlyWhatWasConsumed(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 4))
	produce(t, c, "t", "m", 5000, "")
	got := newTally()
	perQueue := map[int32]map[int64]bool{}
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithConsumeGoroutineNums(8)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			time.Sleep(time.Millisecond)
			got.mu.Lock()
			for _, m := range msgs {
				if perQueue[m.QueueID] == nil {
					perQueue[m.QueueID] = map[int64]bool{}
				}
				perQueue[m.QueueID][m.QueueOffset] = true
			}
			got.mu.Unlock()
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	waitFor(t, 20*time.Second, "consumption under way", func() bool { return got.distinct() > 1000 })
	shutdown(t, pc)
	b := c.Brokers()[0]
	require.Equal(t, 1, b.Requests(protocol.RequestUnregisterClient))
	require.Empty(t, b.Clients("g"))
	got.mu.Lock()
	defer got.mu.Unlock()
	for q := int32(0); q < 4; q++ {
		committed, _ := b.CommittedOffset("g", "t", int(q))
		for off := int64(0); off < committed; off++ {
			require.True(t, perQueue[q][off], "queue %d offset %d committed but never consumed", q, off)
		}
		// Messages consumed beyond the committed offset would be consumed again by
		// the next owner: a graceful shutdown leaves none (listeners finished first).
		for off := range perQueue[q] {
			require.Less(t, off, committed, "queue %d offset %d consumed but not committed", q, off)
		}
	}
}
