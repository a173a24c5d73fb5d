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

func TestConsumeEverythingAndCommit(t *testing.T) {
	for _, enc := range []consumer.HeaderEncoding{consumer.HeaderJSON, consumer.HeaderRocketMQ} {
		t.Run(fmt.Sprint(enc), func(t *testing.T) { consumeEverything(t, enc) })
	}
}

func consumeEverything(t *testing.T, enc consumer.HeaderEncoding) {
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("orders", 4))
	want := produce(t, c, "orders", "m", 2000, "")
	got := newTally()
	pc := startConsumer(t, "g1", "orders", consumer.All(), fastOptions(c, consumer.WithHeaderEncoding(enc)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	waitFor(t, 30*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	shutdown(t, pc)
	missing, dups := got.check(want)
	require.Zero(t, missing)
	require.Zero(t, dups)
	for _, b := range c.Brokers() {
		committed := b.CommittedOffsets("g1")
		for q := 0; q < 4; q++ {
			require.Equal(t, b.MaxOffset("orders", q), committed[message.Queue{Topic: "orders", BrokerName: b.Name(), QueueID: int32(q)}], "%s queue %d", b.Name(), q)
		}
		require.Empty(t, b.Clients("g1"), "the consumer unregistered")
	}
}
