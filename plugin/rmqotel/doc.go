// Package rmqotel plugs OpenTelemetry metrics and traces into an rmqpush consumer
// through its hooks, as franz-go's kotel does for franz-go. It uses the OpenTelemetry
// API only: the application brings the SDK and an exporter (OTLP, Prometheus, ...).
//
//	m, err := rmqotel.NewMetrics(rmqotel.WithMeterProvider(mp))
//	tr := rmqotel.NewTracing(rmqotel.WithTracerProvider(tp))
//	c, err := consumer.NewPushConsumer("orders-service",
//		consumer.WithNameServers("127.0.0.1:9876"),
//		consumer.WithHooks(m, tr))
//
// Metrics carry the names, units, buckets and labels RocketMQ 5's own clients publish
// (rocketmq_process_time, rocketmq_await_time, rocketmq_consumer_cached_messages,
// rocketmq_consumer_cached_bytes), and, in the same style, what only RocketMQ's brokers
// publish otherwise, seen from the client: lag per queue, lag latency, pulls and their
// latency per broker, send-backs, dead letters and local retries. The README's
// "Metrics" section has the table.
//
// Tracing starts one "process" span per listener call, following the OpenTelemetry
// messaging semantic conventions for RocketMQ, whose parent (one message) or links (a
// batch) are the contexts producers propagated in the messages' properties, as
// OpenTelemetry's Java RocketMQ instrumentation writes them (W3C traceparent and
// tracestate by default); the listener's context carries the span.
//
// Nothing here starts a goroutine; gauges are read when the SDK collects.
package rmqotel
