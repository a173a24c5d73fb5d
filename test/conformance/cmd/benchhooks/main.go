// Command benchhooks is the benchmark's rmqpush worker with a metrics or tracing plugin
// installed, to measure what a plugin costs in cmd/bench's scenarios (the realistic
// mode included). Which plugin depends on the name the program is built under:
//
//	benchrmqprom       plugin/rmqprom on a Prometheus registry
//	benchrmqotel       plugin/rmqotel metrics on the OpenTelemetry SDK (a manual reader)
//	benchrmqoteltrace  the same, plus rmqotel tracing, every span sampled and batched to
//	                   an exporter that drops them
//
// It is a module of its own so that the plugins' SDKs stay out of test/conformance's:
//
//	cd test/conformance/cmd/benchhooks
//	for p in benchrmqprom benchrmqotel benchrmqoteltrace; do go build -o /tmp/bench/$p .; done
//	cd ../.. && go run ./cmd/bench -realistic -scenarios consume -notuned -noceiling \
//	    -worker rmqprom=/tmp/bench/benchrmqprom -worker rmqotel=/tmp/bench/benchrmqotel \
//	    -worker rmqoteltrace=/tmp/bench/benchrmqoteltrace -clients rmqpush,rmqprom,rmqotel,rmqoteltrace
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/plugin/rmqotel"
	"github.com/rmqpush/rmqpush/plugin/rmqprom"
	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
	"github.com/rmqpush/rmqpush/test/conformance/internal/rmqworker"
)

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	hooks, err := hooksFor(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchhooks:", err)
		os.Exit(2)
	}
	os.Exit(benchkit.Main(strings.TrimPrefix(name, "bench"), &rmqworker.Client{Hooks: hooks}, os.Args[1:], os.Stdout, os.Stderr))
}

// hooksFor returns the plugin hooks a program named name installs.
func hooksFor(name string) ([]consumer.Hook, error) {
	switch name {
	case "benchrmqprom":
		m, err := rmqprom.NewMetrics(prometheus.NewRegistry())
		return []consumer.Hook{m}, err
	case "benchrmqotel", "benchrmqoteltrace":
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		m, err := rmqotel.NewMetrics(rmqotel.WithMeterProvider(mp))
		if err != nil || name == "benchrmqotel" {
			return []consumer.Hook{m}, err
		}
		// The providers live as long as the worker process.
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		return []consumer.Hook{m, rmqotel.NewTracing(rmqotel.WithTracerProvider(tp))}, nil
	default:
		return nil, fmt.Errorf("built as %q: build it as benchrmqprom, benchrmqotel or benchrmqoteltrace", name)
	}
}
