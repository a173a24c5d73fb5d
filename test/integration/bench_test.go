package integration

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// processCPU returns the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConsume measures the consumer end to end on the fake broker: b.N messages
// preloaded over 8 queues, consumed by a listener that only counts. ns/op and
// allocs/op are per message and include the fake broker's share (it runs in the same
// process), as does cpu-ns/op, the process's CPU time per message; compare runs, not
// absolute values. The namespace case shows that restoring topic names costs nothing
// per message; the service-time case answers each pull 300 µs after it arrived, as a
// real broker takes, so the consumer's workers wait for pulls as they do in production.
// The orderly cases consume 1 KiB messages with an OrderlyListener, with and without
// WithLentBodies.
//
//	go test -run '^$' -bench BenchmarkConsume -benchmem ./test/integration
func BenchmarkConsume(b *testing.B) {
	for _, size := range []struct {
		name          string
		body          int
		namespace     string
		service       time.Duration
		orderly, lent bool
	}{
		{name: "128B", body: 128}, {name: "1KiB", body: 1024}, {name: "128B-namespace", body: 128, namespace: "NsB"},
		{name: "128B-service300us", body: 128, service: 300 * time.Microsecond},
		{name: "1KiB-orderly", body: 1024, orderly: true}, {name: "1KiB-orderly-lent", body: 1024, orderly: true, lent: true},
	} {
		b.Run(size.name, func(b *testing.B) {
			topic := "bench"
			if size.namespace != "" {
				topic = size.namespace + "%bench"
			}
			c, err := fakebroker.NewCluster(fakebroker.WithTopic(topic, 8), fakebroker.WithPullServiceTime(size.service))
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
			count := func(msgs []*message.Ext) {
				if got.Add(int64(len(msgs))) == int64(b.N) {
					close(done)
				}
			}
			opts := []consumer.Option{
				consumer.WithNameServers(c.NameServerAddr()),
				consumer.WithNamespace(size.namespace),
				consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
			}
			if size.lent {
				opts = append(opts, consumer.WithLentBodies())
			}
			pc, err := consumer.NewPushConsumer("bench-group", opts...)
			if err != nil {
				b.Fatal(err)
			}
			_ = pc.Subscribe("bench", consumer.All())
			var listener any = consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
				count(msgs)
				return consumer.ConsumeSuccess
			})
			if size.orderly {
				listener = consumer.OrderlyFunc(func(_ context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
					count(msgs)
					return consumer.OrderlySuccess
				})
			}
			if err := pc.RegisterListener(listener); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU(b)
			if err := pc.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(5 * time.Minute):
				b.Fatalf("consumed %d of %d", got.Load(), b.N)
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
			_ = pc.Shutdown(context.Background())
		})
	}
}
