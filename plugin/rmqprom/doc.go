// Package rmqprom publishes an rmqpush consumer's metrics with Prometheus' client_golang
// through the consumer's hooks, as franz-go's kprom does for franz-go: the same names,
// buckets and labels as plugin/rmqotel (package rmqmetrics; the README's "Metrics"
// table), for services that run Prometheus without OpenTelemetry.
//
//	reg := prometheus.NewRegistry()
//	m, err := rmqprom.NewMetrics(reg)
//	c, err := consumer.NewPushConsumer("orders-service",
//		consumer.WithNameServers("127.0.0.1:9876"),
//		consumer.WithHooks(m))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// It exists beside plugin/rmqotel for its cost: an observation with client_golang is a
// few atomic operations, where the OpenTelemetry SDK resolves the attribute set on
// every recording; see the README's closing figures. Nothing here starts a goroutine;
// gauges are read when Prometheus scrapes.
package rmqprom
