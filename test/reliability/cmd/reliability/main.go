// Command reliability runs rmqpush's reliability scenarios (package reliability) and
// prints their table:
//
//	go run ./test/reliability/cmd/reliability -scenario all -full
//
// -scenario takes "all" or a comma-separated list of letters (A–F); -full runs the
// issue's sizes (200,000 messages, kills every 8 s for about 60 s, ...), without it the
// CI sizes. Each scenario's files (record files, consumer logs and stats, the fake
// cluster's output) stay in -dir (default: a new temporary directory, printed).
//
// Exit status: 0 when every scenario ran and met its targets, 1 otherwise, 2 for bad
// flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rmqpush/rmqpush/test/reliability"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reliability", flag.ContinueOnError)
	fs.SetOutput(stderr)
	which := fs.String("scenario", "all", `"all" or letters, e.g. "A,C"`)
	full := fs.Bool("full", false, "run the full version (the issue's sizes) instead of the CI version")
	dir := fs.String("dir", "", "work directory (default: a new temporary directory)")
	quiet := fs.Bool("quiet", false, "print only the table")
	consumerArgs := fs.String("consumer-args", "", `extra flags for every consumer process, e.g. "-persist-interval 1s" (experiments)`)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	letters := reliability.Scenarios()
	if *which != "all" {
		letters = strings.Split(strings.ToUpper(*which), ",")
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "rmqpush-reliability-")
		if err != nil {
			fmt.Fprintln(stderr, "reliability:", err)
			return 1
		}
		*dir = d
	}
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	fmt.Fprintf(stderr, "reliability: building into %s\n", *dir)
	bins, err := reliability.Build(ctx, *dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	cfg := reliability.Config{Bins: bins, Dir: *dir, Full: *full, Progress: progress, ConsumerArgs: strings.Fields(*consumerArgs)}
	var results []reliability.Result
	status := 0
	for _, l := range letters {
		res, err := reliability.Run(ctx, cfg, strings.TrimSpace(l))
		if err != nil {
			fmt.Fprintf(stderr, "reliability: scenario %s: %v\n", l, err)
			status = 1
			if res.Scenario == "" {
				continue
			}
			res.Notes = append(res.Notes, "did not complete: "+err.Error())
		}
		if !res.Met() {
			status = 1
		}
		results = append(results, res)
	}
	if err := reliability.WriteTable(stdout, results); err != nil {
		fmt.Fprintln(stderr, "reliability:", err)
		return 1
	}
	return status
}
