package rmqprom

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
)

// BenchmarkMetricsHook is the hook's own cost for one listener call on one message
// (await time, process time): what the consume path pays per message with the plugin.
// Compare plugin/rmqotel's BenchmarkMetricsHook.
//
//	(cd plugin/rmqprom && go test -run '^$' -bench . -benchmem -cpu 1)
func BenchmarkMetricsHook(b *testing.B) {
	mt, err := NewMetrics(prometheus.NewRegistry())
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
			ctx := mt.OnConsumeStart(ctx, call)
			mt.OnConsumeEnd(ctx, call)
		}
	})
}
