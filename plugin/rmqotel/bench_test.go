package rmqotel

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// BenchmarkConsume is test/integration's BenchmarkConsume (b.N messages of 128 B over
// 8 queues, consumer and fake broker in one process, a listener that only counts)
// without hooks, with Metrics on the OpenTelemetry SDK (a manual reader: recording
// costs what it costs under any exporter), and with Metrics and Tracing (every span
// sampled and handed to an in-memory exporter). The differences in ns/op are the
// plugin's cost per message on this machine; they include no broker or network time
// of a real deployment.
//
//	(cd plugin/rmqotel && go test -run '^$' -bench . -benchmem)
func BenchmarkConsume(b *testing.B) {
	for _, bc := range []struct {
		name  string
		hooks func(b *testing.B) []consumer.Hook
	}{
		{"none", func(*testing.B) []consumer.Hook { return nil }},
		{"metrics", func(b *testing.B) []consumer.Hook {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
			m, err := NewMetrics(WithMeterProvider(mp))
			if err != nil {
				b.Fatal(err)
			}
			return []consumer.Hook{m}
		}},
		{"metrics+tracing", func(b *testing.B) []consumer.Hook {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
			b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
			m, err := NewMetrics(WithMeterProvider(mp))
			if err != nil {
				b.Fatal(err)
			}
			return []consumer.Hook{m, NewTracing(WithTracerProvider(tp))}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := fakebroker.NewCluster(fakebroker.WithTopic("bench", 8))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			body := make([]byte, 128)
			const chunk = 1024
			for i := 0; i < b.N; i += chunk {
				msgs := make([]*message.Message, min(chunk, b.N-i))
				for j := range msgs {
					msgs[j] = &message.Message{Topic: "bench", Body: body}
				}
				if _, err := c.Produce("bench", msgs...); err != nil {
					b.Fatal(err)
				}
			}
			var got atomic.Int64
			done := make(chan struct{})
			pc, err := consumer.NewPushConsumer("bench-group", consumer.WithNameServers(c.NameServerAddr()),
				consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset), consumer.WithHooks(bc.hooks(b)...))
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
