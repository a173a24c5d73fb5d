// Command soak consumes at a steady rate for a long time on the fake cluster while it
// injects a fault every minute (issue 15), and reports what was lost, every duplicate
// with the fault that caused it, and each long-lived consumer's RSS, goroutines and
// open connections before the first fault and at the end:
//
//	go run ./test/reliability/cmd/soak                      # 5,000 msg/s for 30 minutes
//	go run ./test/reliability/cmd/soak -duration 4m         # a shorter one
//
// It is not part of the test command. The fake cluster and each consumer run in
// processes of their own (package reliability builds them); faults rotate: a broker's
// connections closed, a broker stopped for 5 s, the churned consumer replaced (SIGTERM
// and SIGKILL in turn), every pull answered SYSTEM_BUSY for 5 s. Files (records,
// logs, samples.tsv) stay in -dir.
//
// Exit status: 0 when every target was met, 1 otherwise, 2 for bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rmqpush/rmqpush/test/reliability"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := reliability.DefaultSoakConfig()
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long messages are produced")
	fs.IntVar(&cfg.Rate, "rate", cfg.Rate, "messages produced per second")
	fs.DurationVar(&cfg.FaultEvery, "fault-every", cfg.FaultEvery, "time between faults")
	fs.DurationVar(&cfg.SampleEvery, "sample-every", cfg.SampleEvery, "time between samples of each consumer")
	fs.IntVar(&cfg.Consumers, "consumers", cfg.Consumers, "consumer processes (at least 2: the last one is churned)")
	fs.DurationVar(&cfg.Delay, "delay", cfg.Delay, "listener work per message")
	dir := fs.String("dir", "", "work directory (default: a new temporary directory)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if cfg.Consumers < 2 || cfg.Rate < 1 || cfg.Duration <= 0 || cfg.FaultEvery <= 0 || cfg.SampleEvery <= 0 {
		fmt.Fprintln(stderr, "soak: -consumers must be at least 2; -rate, -duration, -fault-every and -sample-every positive")
		return 2
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "rmqpush-soak-")
		if err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			return 1
		}
		*dir = d
	}
	fmt.Fprintf(stderr, "soak: building into %s\n", *dir)
	bins, err := reliability.Build(ctx, *dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	cfg.Bins, cfg.Dir, cfg.Progress = bins, *dir, stderr
	res, err := reliability.Soak(ctx, cfg)
	status := 0
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		status = 1
	}
	if werr := reliability.WriteSoakReport(stdout, res); werr != nil {
		fmt.Fprintln(stderr, "soak:", werr)
		return 1
	}
	if !res.Met() {
		status = 1
	}
	return status
}
