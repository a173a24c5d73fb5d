// Command bench measures rmqpush against rocketmq-client-go (the peer) on the same
// broker in the same run, each client in a worker process of its own; see package
// benchrun for the scenarios. Run it from test/conformance:
//
//	go run ./cmd/bench                                   # everything, on a fake cluster it starts
//	go run ./cmd/bench -scenarios consume -runs 1        # a quicker look
//	go run ./cmd/bench -realistic                        # a fake broker that behaves as a real one on a small machine
//	go run ./cmd/bench -realistic -app-heap 64           # the same, each worker holding 64 MiB as a service's heap
//	go run ./cmd/bench -namesrv 10.0.0.5:9876 -broker 10.0.0.5:10911   # a real cluster
//
// It builds the workers (cmd/benchrmqpush, cmd/benchpeer, cmd/benchraw) and the fake
// broker (test/fakebroker/cmd/fakebroker) with `go build` into a temporary directory,
// prints progress to stderr and the tables (Markdown) to stdout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchrun"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg := benchrun.Default()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&cfg.NameServer, "namesrv", "", "a real cluster's name server host:port (default: start the fake cluster)")
	fs.StringVar(&cfg.Broker, "broker", "", "with -namesrv: the master host:port to create the benchmark's topics on")
	fs.IntVar(&cfg.BrokerPID, "broker-pid", 0, "with -namesrv: the broker's process id on this machine, to report its CPU per message")
	fs.StringVar(&cfg.BinDir, "bindir", "", "build the programs here (default: a temporary directory)")
	noBuild := fs.Bool("nobuild", false, "use the programs already in -bindir")
	scenarios := fs.String("scenarios", strings.Join(cfg.Scenarios, ","), "comma-separated: consume, latency, idle")
	clients := fs.String("clients", strings.Join(cfg.Clients, ","), "comma-separated: "+benchrun.ClientNames)
	n128 := fs.Int("n128", cfg.Workloads[0].N, "consume-all: messages of 128 B (0: skip)")
	n1k := fs.Int("n1k", cfg.Workloads[1].N, "consume-all: messages of 1 KiB (0: skip)")
	fs.IntVar(&cfg.Runs, "runs", cfg.Runs, "consume-all: runs of each client and setting")
	noCeiling := fs.Bool("noceiling", false, "consume-all: skip the raw puller")
	noTuned := fs.Bool("notuned", false, "consume-all: skip the tuned settings")
	fs.IntVar(&cfg.LatencyRate, "rate", cfg.LatencyRate, "latency: messages per second")
	fs.DurationVar(&cfg.LatencyDuration, "duration", cfg.LatencyDuration, "latency: measured sending time")
	fs.IntVar(&cfg.LatencyRuns, "latency-runs", cfg.LatencyRuns, "latency: runs of each client")
	fs.IntVar(&cfg.IdleQueues, "idle-queues", cfg.IdleQueues, "idle: queues of the topic")
	fs.DurationVar(&cfg.IdleWindow, "idle-window", cfg.IdleWindow, "idle: measured window")
	realistic := fs.Bool("realistic", false, "the fake broker as a real one behaves on a small machine: -pull-service-time 300us -busy-core")
	fs.DurationVar(&cfg.PullServiceTime, "pull-service-time", 0, "fake cluster: answer each pull this long after it arrived")
	fs.BoolVar(&cfg.BusyCore, "busy-core", false, "keep one core busy with another process during the consume and latency scenarios")
	fs.IntVar(&cfg.WorkerGOMAXPROCS, "worker-gomaxprocs", 0, "GOMAXPROCS of the clients' worker processes (0: Go's default)")
	fs.IntVar(&cfg.AppHeapMiB, "app-heap", 0, "MiB of live objects every client's worker holds, as a service's own heap (0: none)")
	fs.StringVar(&cfg.ProfileDir, "profiles", "", "write CPU and allocation profiles of each rmqpush consume run here")
	fs.BoolVar(&cfg.Traces, "traces", false, "with -profiles: an execution trace of each of those runs too (slows them: not for figures)")
	workers := workerFlags{}
	fs.Var(workers, "worker", "an extra worker program, name=path (repeatable); add name to -clients")
	results := fs.String("results", "", "append every worker result to this file as JSON lines")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *realistic {
		cfg.BusyCore = true
		if cfg.PullServiceTime == 0 {
			cfg.PullServiceTime = benchrun.RealisticPullServiceTime
		}
	}
	cfg.Workers = workers
	cfg.Build = !*noBuild
	cfg.Scenarios = split(*scenarios)
	cfg.Clients = split(*clients)
	cfg.Ceiling, cfg.Tuned = !*noCeiling, !*noTuned
	cfg.Workloads = nil
	if *n128 > 0 {
		cfg.Workloads = append(cfg.Workloads, benchrun.Workload{N: *n128, Size: 128})
	}
	if *n1k > 0 {
		cfg.Workloads = append(cfg.Workloads, benchrun.Workload{N: *n1k, Size: 1024})
	}
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return err
		}
	}
	if *results != "" {
		f, err := os.OpenFile(*results, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.Results = f
	}
	cfg.Log, cfg.Out = os.Stderr, os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err := benchrun.Run(ctx, cfg)
	return err
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// workerFlags collects -worker name=path flags.
type workerFlags map[string]string

func (w workerFlags) String() string { return "" }

func (w workerFlags) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("-worker %q: want name=path", v)
	}
	w[name] = path
	return nil
}
