package rmqprom

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rmqpush/rmqpush/plugin/internal/plugintest"
)

func newMetrics(b *testing.B) *Metrics {
	mt, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	return mt
}

// BenchmarkConsume consumes end to end in one process (plugintest.BenchConsume)
// without hooks and with Metrics; compare plugin/rmqotel's.
//
//	(cd plugin/rmqprom && go test -run '^$' -bench . -benchmem)
func BenchmarkConsume(b *testing.B) {
	b.Run("none", func(b *testing.B) { plugintest.BenchConsume(b) })
	b.Run("metrics", func(b *testing.B) { plugintest.BenchConsume(b, newMetrics(b)) })
}

// BenchmarkMetricsHook is the hook's own cost per message.
//
//	(cd plugin/rmqprom && go test -run '^$' -bench MetricsHook -benchmem -cpu 1)
func BenchmarkMetricsHook(b *testing.B) {
	mt := newMetrics(b)
	plugintest.BenchHook(b, mt.OnConsumeEnd)
}
