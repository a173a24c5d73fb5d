package rmqotel

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/plugin/internal/plugintest"
)

func newSDKMetrics(b *testing.B) *Metrics {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := NewMetrics(WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkConsume consumes end to end in one process (plugintest.BenchConsume)
// without hooks, with Metrics on the OpenTelemetry SDK (a manual reader: recording
// costs what it costs under any exporter), and with Metrics and Tracing (every span
// sampled, batched to an exporter that drops them).
//
//	(cd plugin/rmqotel && go test -run '^$' -bench . -benchmem)
func BenchmarkConsume(b *testing.B) {
	b.Run("none", func(b *testing.B) { plugintest.BenchConsume(b) })
	b.Run("metrics", func(b *testing.B) { plugintest.BenchConsume(b, newSDKMetrics(b)) })
	b.Run("metrics+tracing", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		plugintest.BenchConsume(b, []consumer.Hook{newSDKMetrics(b), NewTracing(WithTracerProvider(tp))}...)
	})
}

// BenchmarkMetricsHook is the Metrics hook's own cost per message on the SDK.
//
//	(cd plugin/rmqotel && go test -run '^$' -bench MetricsHook -benchmem -cpu 1)
func BenchmarkMetricsHook(b *testing.B) {
	m := newSDKMetrics(b)
	plugintest.BenchHook(b, m.OnConsumeEnd)
}
