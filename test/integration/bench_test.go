package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// BenchmarkConsume measures the consumer end to end on the fake broker: b.N messages
// preloaded over 8 queues, consumed by a listener that only counts. ns/op and
// allocs/op are per message and include the fake broker's share (it runs in the same
// process); compare runs, not absolute values. The namespace case shows that
// restoring topic names costs nothing per message.
//
//	go test -run '^$' -bench BenchmarkConsume -benchmem ./test/integration
func BenchmarkConsume(b *testing.B) {
	for _, size := range []struct {
		name      string
		body      int
		namespace string
	}{{"128B", 128, ""}, {"1KiB", 1024, ""}, {"128B-namespace", 128, "NsB"}} {
		b.Run(size.name, func(b *testing.B) {
			topic := "bench"
			if size.namespace != "" {
				topic = size.namespace + "%bench"
			}
			c, err := fakebroker.NewCluster(fakebroker.WithTopic(topic, 8))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			body := make([]byte, size.body)
			const chunk = 1024
			for i := 0; i < b.N; i += chunk {
				msgs := make([]*message.Message, min(chunk, b.N-i))
				for j := range msgs {
					msgs[j] = &message.Message{Topic: topic, Body: body}
				}
				if _, err := c.Produce(topic, msgs...); err != nil {
					b.Fatal(err)
				}
			}
			var got atomic.Int64
			done := make(chan struct{})
			pc, err := consumer.NewPushConsumer("bench-group",
				consumer.WithNameServers(c.NameServerAddr()),
				consumer.WithNamespace(size.namespace),
				consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
			if err != nil {
				b.Fatal(err)
			}
			_ = pc.Subscribe("bench", consumer.All())
			_ = pc.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
				if got.Add(int64(len(msgs))) == int64(b.N) {
					close(done)
				}
				return consumer.ConsumeSuccess
			}))
			b.ReportAllocs()
			b.ResetTimer()
			if err := pc.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(5 * time.Minute):
				b.Fatalf("consumed %d of %d", got.Load(), b.N)
			}
			b.StopTimer()
			_ = pc.Shutdown(context.Background())
		})
	}
}
