// Metrics: consume while serving the consumer's metrics in the Prometheus format.
//
//	(cd examples/metrics && go run .)                           # on an embedded fake cluster
//	(cd examples/metrics && go run . -namesrv 127.0.0.1:9876)   # on a real broker
//
// It wires plugin/rmqotel to the OpenTelemetry SDK and its Prometheus exporter, serves
// /metrics on a loopback port, produces and consumes messages, then prints what a
// scrape of /metrics says about them. It is a module of its own so that the SDK and the
// exporter stay out of rmqpush's core module.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/examples/internal/demo"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/plugin/rmqotel"
)

func main() {
	namesrv := flag.String("namesrv", "", "name server host:port of a real cluster (default: an embedded fake cluster)")
	listen := flag.String("listen", "127.0.0.1:0", "where /metrics is served (loopback by default)")
	n := flag.Int("n", 1000, "messages to produce and consume")
	flag.Parse()
	a, err := start(config{namesrv: *namesrv, listen: *listen, topic: "MetricsTopic", group: "metrics-group", n: *n})
	if err != nil {
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(1)
	}
	err = a.waitConsumed(time.Minute)
	if err == nil {
		fmt.Printf("consumed %d messages; http://%s/metrics says:\n", *n, a.addr)
		var text string
		if text, err = a.scrape(); err == nil {
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "rocketmq_") && !strings.Contains(line, "_bucket{") {
					fmt.Println(line)
				}
			}
		}
	}
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(1)
	}
}

type config struct {
	namesrv, listen, topic, group string
	n                             int
}

// app is the running example: a cluster (embedded unless namesrv is given), the
// metrics server and the consumer.
type app struct {
	env      *demo.Env
	mp       *sdkmetric.MeterProvider
	metrics  *rmqotel.Metrics
	srv      *http.Server
	served   chan error
	addr     string
	c        *consumer.PushConsumer
	consumed atomic.Int64
	n        int64
}

// start produces cfg.n messages, starts serving /metrics and starts consuming.
func start(cfg config) (*app, error) {
	a := &app{n: int64(cfg.n), served: make(chan error, 1)}
	var err error
	if a.env, err = demo.Setup(cfg.namesrv, cfg.topic); err != nil {
		return nil, err
	}
	if err := a.produce(cfg); err != nil {
		a.env.Close()
		return nil, err
	}

	// The SDK and the Prometheus exporter, on a registry of this app's own. No units
	// and no scope labels: the names are then RocketMQ's, rocketmq_process_time_bucket.
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutUnits(), otelprom.WithoutScopeInfo())
	if err != nil {
		a.env.Close()
		return nil, err
	}
	a.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	if a.metrics, err = rmqotel.NewMetrics(rmqotel.WithMeterProvider(a.mp)); err != nil {
		a.closeAll()
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		a.closeAll()
		return nil, err
	}
	a.addr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { a.served <- a.srv.Serve(ln) }()

	a.c, err = consumer.NewPushConsumer(cfg.group,
		consumer.WithNameServers(a.env.NameServer),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithHooks(a.metrics))
	if err == nil {
		err = a.c.Subscribe(cfg.topic, consumer.All())
	}
	if err == nil {
		err = a.c.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			a.consumed.Add(int64(len(msgs)))
			return consumer.ConsumeSuccess
		}))
	}
	if err == nil {
		ctx, cancel := demo.Deadline(30 * time.Second)
		err = a.c.Start(ctx)
		cancel()
	}
	if err != nil {
		a.c = nil
		a.closeAll()
		return nil, err
	}
	return a, nil
}

func (a *app) produce(cfg config) error {
	p, err := demo.NewProducer(a.env.NameServer)
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, cancel := demo.Deadline(time.Minute)
	defer cancel()
	for i := range cfg.n {
		if err := p.Send(ctx, &message.Message{Topic: cfg.topic, Body: []byte(fmt.Sprintf("metrics #%d", i))}); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
	}
	return nil
}

// waitConsumed waits until the n messages were consumed.
func (a *app) waitConsumed(timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for a.consumed.Load() < a.n {
		select {
		case <-deadline.C:
			return fmt.Errorf("consumed %d of %d messages in %v", a.consumed.Load(), a.n, timeout)
		case <-tick.C:
		}
	}
	return nil
}

// scrape returns the text /metrics serves.
func (a *app) scrape() (string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + a.addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// close shuts the consumer down, then the server, the SDK and the cluster.
func (a *app) close() error { return a.closeAll() }

func (a *app) closeAll() error {
	var errs []error
	if a.c != nil {
		ctx, cancel := demo.Deadline(10 * time.Second)
		errs = append(errs, a.c.Shutdown(ctx))
		cancel()
	}
	if a.srv != nil {
		ctx, cancel := demo.Deadline(5 * time.Second)
		errs = append(errs, a.srv.Shutdown(ctx))
		cancel()
		if err := <-a.served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	if a.metrics != nil {
		errs = append(errs, a.metrics.Close())
	}
	if a.mp != nil {
		errs = append(errs, a.mp.Shutdown(context.Background()))
	}
	a.env.Close()
	return errors.Join(errs...)
}
