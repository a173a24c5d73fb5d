package rmqprom

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newCluster(t testing.TB, opts ...fakebroker.Opt) *fakebroker.Cluster {
	t.Helper()
	c, err := fakebroker.NewCluster(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// produce sends n messages "m-<i>" to topic, each given the properties props(i) returns.
func produce(t testing.TB, c *fakebroker.Cluster, topic string, n int, props func(i int) map[string]string) {
	t.Helper()
	msgs := make([]*message.Message, n)
	for i := range msgs {
		msgs[i] = &message.Message{Topic: topic, Body: []byte(fmt.Sprintf("m-%d", i))}
		if props != nil {
			for k, v := range props(i) {
				msgs[i].Properties.Set(k, v)
			}
		}
	}
	_, err := c.Produce(topic, msgs...)
	require.NoError(t, err)
}

func startConsumer(t testing.TB, c *fakebroker.Cluster, topic string, opts []consumer.Option, l consumer.ConcurrentlyFunc) *consumer.PushConsumer {
	t.Helper()
	opts = append([]consumer.Option{
		consumer.WithNameServers(c.NameServerAddr()),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithPersistConsumerOffsetInterval(100 * time.Millisecond),
	}, opts...)
	pc, err := consumer.NewPushConsumer("g", opts...)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe(topic, consumer.All()))
	require.NoError(t, pc.RegisterListener(l))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, pc.Start(ctx))
	return pc
}

func shutdown(t testing.TB, pc *consumer.PushConsumer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, pc.Shutdown(ctx))
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
