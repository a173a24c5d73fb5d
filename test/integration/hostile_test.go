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

// produceTo stores n messages with bodies "<prefix>-<i>" in broker's queues of topic,
// round robin over queues 0..queues-1, and returns the bodies.
func produceTo(t *testing.T, b *fakebroker.Broker, topic, prefix string, queues, n int) []string {
	t.Helper()
	bodies := make([]string, 0, n)
	for i := range n {
		body := fmt.Sprintf("%s-%d", prefix, i)
		_, err := b.Produce(topic, i%queues, &message.Message{Topic: topic, Body: []byte(body)})
		require.NoError(t, err)
		bodies = append(bodies, body)
	}
	return bodies
}

// A name server that routes to a broker that accepts connections and never answers
// (broker-a, paused): the consumer starts, and consumes broker-b's queues meanwhile;
// broker-a's once it answers again. Nothing lost, nothing twice. (remoting's
// TestStalledPeer covers the other hostile peers: half a frame, a byte at a time, a
// 16 MiB length and nothing.)
func TestConsumesPastABrokerThatNeverAnswers(t *testing.T) {
	const topic, group = "HostileTopic", "hostile-group"
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic(topic, 4))
	a, b := c.Broker("broker-a"), c.Broker("broker-b")
	want := produceTo(t, b, topic, "b", 4, 400)
	a.Pause()

	got := newTally()
	pc, err := consumer.NewPushConsumer(group, fastOptions(c)...)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe(topic, consumer.All()))
	require.NoError(t, pc.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		got.add(msgs)
		return consumer.ConsumeSuccess
	})))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	began := time.Now()
	require.NoError(t, pc.Start(ctx))
	t.Logf("Start took %v with broker-a never answering", time.Since(began))
	defer shutdown(t, pc)
	// The first pass waited on broker-a once for the member list and once for a start
	// offset, not once per topic and per queue (2 topics, 5 queues: 7 request timeouts).
	// A second pass may have begun since, and sent one more of either.
	require.LessOrEqual(t, a.Requests(fakebroker.RequestGetConsumerListByGroup), 2)
	require.LessOrEqual(t, a.Requests(fakebroker.RequestQueryConsumerOffset), 2)

	waitFor(t, time.Minute, "broker-b's messages", func() bool { return got.distinct() == len(want) })
	t.Logf("broker-b's %d messages consumed %v after Start began", len(want), time.Since(began))

	a.Resume()
	want = append(want, produceTo(t, a, topic, "a", 4, 400)...)
	waitFor(t, time.Minute, "broker-a's messages once it answers", func() bool { return got.distinct() == len(want) })
	missing, dups := got.check(want)
	require.Zero(t, missing)
	require.Zero(t, dups)
}
