// Command fakebroker runs a fake RocketMQ 4.9.8 cluster (package fakebroker) until it is
// interrupted, so that any RocketMQ client, or rmqpush's examples with -namesrv, can be
// pointed at it:
//
//	go run ./test/fakebroker/cmd/fakebroker -namesrv 127.0.0.1:9876 -brokers 2 \
//	    -broker-ports 10911,10921 -topic TopicTest:8
//
// It prints the name server's and the brokers' addresses, then serves until SIGINT or
// SIGTERM. With -control 127.0.0.1:0 it also serves a control endpoint (HTTP + JSON,
// loopback only; package test/fakebroker/control) through which another process stops, starts, kills or
// pauses brokers, injects faults, produces messages and reads offsets and messages, and
// prints its address as "control http://host:port".
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
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rmqpush/rmqpush/test/fakebroker"
	"github.com/rmqpush/rmqpush/test/fakebroker/control"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "fakebroker:", err)
		}
		os.Exit(2)
	}
}

// topicFlags collects repeated -topic name:queues[:broker,broker] flags.
type topicFlags []fakebroker.Opt

func (t *topicFlags) String() string { return "" }

func (t *topicFlags) Set(v string) error {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) < 2 {
		return fmt.Errorf("-topic %q: want name:queues or name:queues:broker-a,broker-b", v)
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return fmt.Errorf("-topic %q: queue count %q is not a number", v, parts[1])
	}
	var brokers []string
	if len(parts) == 3 && parts[2] != "" {
		brokers = strings.Split(parts[2], ",")
	}
	*t = append(*t, fakebroker.WithTopic(parts[0], n, brokers...))
	return nil
}

// options turns the command line into cluster options and the control endpoint's
// address ("" for none).
func options(args []string, stderr io.Writer) ([]fakebroker.Opt, string, error) {
	fs := flag.NewFlagSet("fakebroker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	namesrv := fs.String("namesrv", "127.0.0.1:9876", "name server address host:port (port 0: any free port)")
	brokers := fs.Int("brokers", 1, "number of brokers (broker-a, broker-b, ...)")
	ports := fs.String("broker-ports", "", "comma-separated broker ports, one per broker (default: free ports)")
	cluster := fs.String("cluster", fakebroker.DefaultClusterName, "cluster name")
	autoCreate := fs.Bool("auto-create", true, "create topics on first send (autoCreateTopicEnable)")
	delayScale := fs.Float64("delay-scale", 1, "multiply every delay level by this factor")
	expiry := fs.Duration("client-expiry", fakebroker.DefaultClientExpiry, "how long a client may stay silent before it is dropped")
	serviceTime := fs.Duration("pull-service-time", 0, "answer each pull (and pop) this long after it arrived, as a busy real broker (e.g. 300us)")
	reorder := fs.Duration("out-of-order-offsets", 0, "process pulls and offset updates up to this long late, in any order, as 4.9.8's thread pools may (e.g. 5ms)")
	controlAddr := fs.String("control", "", "serve the control endpoint (HTTP, JSON) on this loopback host:port; empty: none")
	propertyFilter := fs.Bool("property-filter", false, "filter SQL92 subscriptions on the brokers (enablePropertyFilter)")
	rocketMQ5 := fs.Bool("rocketmq5", false, "answer RocketMQ 5's consumer requests as 5.3.3 (server-side assignment, POP)")
	var topics topicFlags
	fs.Var(&topics, "topic", "topic to create, name:queues[:broker-a,broker-b] (repeatable)")
	if err := fs.Parse(args); err != nil {
		return nil, "", err
	}
	if fs.NArg() > 0 {
		return nil, "", fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *controlAddr != "" {
		if err := control.CheckAddr(*controlAddr); err != nil {
			return nil, "", fmt.Errorf("-control: %w", err)
		}
	}
	host, port, err := net.SplitHostPort(*namesrv)
	if err != nil {
		return nil, "", fmt.Errorf("-namesrv %q: %w", *namesrv, err)
	}
	nsPort, err := strconv.Atoi(port)
	if err != nil {
		return nil, "", fmt.Errorf("-namesrv %q: port %q is not a number", *namesrv, port)
	}
	opts := []fakebroker.Opt{
		fakebroker.WithHost(host),
		fakebroker.WithNameServerPort(nsPort),
		fakebroker.WithBrokers(*brokers),
		fakebroker.WithClusterName(*cluster),
		fakebroker.WithAutoCreateTopics(*autoCreate),
		fakebroker.WithDelayScale(*delayScale),
		fakebroker.WithClientExpiry(*expiry),
		fakebroker.WithPropertyFilter(*propertyFilter),
		fakebroker.WithRocketMQ5(*rocketMQ5),
	}
	if *serviceTime < 0 || *reorder < 0 {
		return nil, "", errors.New("-pull-service-time and -out-of-order-offsets must not be negative")
	}
	if *reorder > 0 {
		opts = append(opts, fakebroker.WithOutOfOrderOffsets(*reorder))
	}
	if *serviceTime > 0 {
		// After the reordering: the pull's Lag is the service time, offsets still reorder
		// against it.
		opts = append(opts, fakebroker.WithLag(fakebroker.Lag{Code: fakebroker.RequestPullMessage, Min: *serviceTime, Max: *serviceTime + *reorder}),
			fakebroker.WithLag(fakebroker.Lag{Code: fakebroker.RequestPopMessage, Min: *serviceTime, Max: *serviceTime + *reorder}))
	}
	if *ports != "" {
		var ps []int
		for _, p := range strings.Split(*ports, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return nil, "", fmt.Errorf("-broker-ports %q: %q is not a number", *ports, p)
			}
			ps = append(ps, n)
		}
		opts = append(opts, fakebroker.WithBrokerPorts(ps...))
	}
	return append(opts, topics...), *controlAddr, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serve runs the cluster (and the control endpoint, if asked for) until ctx ends.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts, controlAddr, err := options(args, stderr)
	if err != nil {
		return err
	}
	c, err := fakebroker.NewCluster(opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(stdout, "name server %s\n", c.NameServerAddr())
	for _, b := range c.Brokers() {
		fmt.Fprintf(stdout, "broker %s %s\n", b.Name(), b.Addr())
	}
	if controlAddr != "" {
		ln, err := net.Listen("tcp", controlAddr)
		if err != nil {
			return fmt.Errorf("-control: %w", err)
		}
		srv := &http.Server{Handler: control.NewHandler(c), ReadHeaderTimeout: 10 * time.Second}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			<-served
		}()
		fmt.Fprintf(stdout, "control http://%s\n", ln.Addr())
	}
	fmt.Fprintln(stdout, "ready")
	<-ctx.Done()
	fmt.Fprintf(stdout, "stopping at %s\n", time.Now().Format(time.RFC3339))
	return nil
}
