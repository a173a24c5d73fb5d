package rmqotel

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
)

// BenchmarkMetricsHook is the Metrics hook's own cost for one listener call on one
// message (await time, process time), on the OpenTelemetry SDK, from as many
// goroutines as GOMAXPROCS: what the consume path pays per message with the plugin.
//
//	(cd plugin/rmqotel && go test -run '^$' -bench MetricsHook -benchmem)
func BenchmarkMetricsHook(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	m, err := NewMetrics(WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		now := time.Now()
		msg := &message.Ext{Message: message.Message{Topic: "bench"}, CachedAt: now.Add(-time.Millisecond)}
		call := &consumer.ConsumeCall{Group: "g", ClientID: "127.0.0.1@1", Queue: message.Queue{Topic: "bench", BrokerName: "b", QueueID: 1},
			Msgs: []*message.Ext{msg}, Begin: now, Took: 2 * time.Millisecond, Success: true}
		ctx := context.Background()
		for pb.Next() {
			ctx := m.OnConsumeStart(ctx, call)
			m.OnConsumeEnd(ctx, call)
		}
	})
}
