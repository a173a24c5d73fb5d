// Package plugintest holds what the metrics and tracing plugins' tests share: a fake
// cluster with a consumer on it, and the benchmarks of a plugin's cost per message.
package plugintest

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

// NewCluster starts a fake cluster closed at the end of the test.
func NewCluster(t testing.TB, opts ...fakebroker.Opt) *fakebroker.Cluster {
	t.Helper()
	c, err := fakebroker.NewCluster(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// Produce sends n messages "m-<i>" to topic, each given the properties props(i) returns.
func Produce(t testing.TB, c *fakebroker.Cluster, topic string, n int, props func(i int) map[string]string) {
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

// StartConsumer starts a concurrent consumer of group "g" on topic from the first
// offset, with opts.
func StartConsumer(t testing.TB, c *fakebroker.Cluster, topic string, opts []consumer.Option, l consumer.ConcurrentlyFunc) *consumer.PushConsumer {
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

// Shutdown shuts pc down within 10 s.
func Shutdown(t testing.TB, pc *consumer.PushConsumer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, pc.Shutdown(ctx))
}

// WaitFor polls cond until it holds, for at most 20 s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
