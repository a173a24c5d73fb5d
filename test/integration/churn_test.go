package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// Three consumers share 8 queues on each of 2 brokers; mid-stream one leaves (Shutdown)
// and a new one joins. Every message is consumed at least once; duplicates are reported.
func TestGroupChurnLosesNothing(t *testing.T) {
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("t", 8))
	const n = 20000
	want := produce(t, c, "t", "m", n, "")
	got := newTally()
	listener := func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		time.Sleep(2 * time.Millisecond) // keep the group busy while it changes
		got.add(msgs)
		return consumer.ConsumeSuccess
	}
	opts := fastOptions(c, consumer.WithPullThresholdForQueue(50), consumer.WithConsumeGoroutineNums(4))
	start := time.Now()
	var members []*consumer.PushConsumer
	for i := range 3 {
		members = append(members, startConsumer(t, "g", "t", consumer.All(),
			append(opts, consumer.WithInstanceName(fmt.Sprintf("c%d", i))), listener))
	}
	waitFor(t, 30*time.Second, "a third of the messages", func() bool { return got.distinct() > n/3 })
	shutdown(t, members[0])
	waitFor(t, 30*time.Second, "two thirds of the messages", func() bool { return got.distinct() > 2*n/3 })
	members = append(members[1:], startConsumer(t, "g", "t", consumer.All(),
		append(opts, consumer.WithInstanceName("c3")), listener))
	waitFor(t, 60*time.Second, "every message", func() bool { return got.distinct() == n })
	took := time.Since(start)
	for _, m := range members {
		shutdown(t, m)
	}
	missing, dups := got.check(want)
	t.Logf("%d messages, %d consumers joining and leaving: %d missing, %d duplicates (%.3f%%), %.1fs",
		n, 4, missing, dups, 100*float64(dups)/n, took.Seconds())
	require.Zero(t, missing)
	for _, b := range c.Brokers() {
		committed := b.CommittedOffsets("g")
		for q := 0; q < 8; q++ {
			mq := message.Queue{Topic: "t", BrokerName: b.Name(), QueueID: int32(q)}
			require.Equal(t, b.MaxOffset("t", q), committed[mq], "committed offset of %s", mq)
		}
	}
}
