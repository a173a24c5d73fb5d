// Command relconsumer is the consumer process of rmqpush's reliability suite: it
// consumes a topic with rmqpush and, for every message its listener is handed, appends
// a line (package record: id, broker, queue id, queue offset, reconsume times, process
// id, time, status) to its record file, with one write(2), before the listener returns.
// The orchestrator (package reliability) kills it with SIGKILL or stops it with SIGTERM,
// on which it calls Shutdown(ctx) and exits.
//
//	relconsumer -namesrv 127.0.0.1:9876 -group g -topic t -records /tmp/r1 -delay 20ms
//
// The listener first does its "work" (sleeps -delay), then writes the record, then
// returns: an application that commits its side effect last. A message whose id equals
// -poison is recorded with status "later" and always gets ReconsumeLater. With -stats it
// writes a line every -stats-every: time, goroutines, live heap after a GC, and the
// number of messages handled, so the orchestrator can see growth.
//
// Exit status: 0 after a clean Shutdown, 1 when Start or Shutdown failed, 2 for bad flags.
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
	"time"

	"github.com/rmqpush/rmqpush/consumer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// settings are the command line.
type settings struct {
	namesrv, group, topic         string
	records, logPath, statsPath   string
	delay                         time.Duration
	poison                        string
	maxReconsume                  int
	goroutines, pullBatch         int
	persist, rebalance, heartbeat time.Duration
	pollNameServer, takeover      time.Duration
	shutdownTimeout, statsEvery   time.Duration
	startTimeout                  time.Duration
	instance                      string
}

func parse(args []string, stderr io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("relconsumer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.namesrv, "namesrv", "", "name server host:port (required)")
	fs.StringVar(&s.group, "group", "reliability", "consumer group")
	fs.StringVar(&s.topic, "topic", "reliability", "topic")
	fs.StringVar(&s.records, "records", "", "record file to append to (required)")
	fs.StringVar(&s.logPath, "log", "", "log file (default: stderr)")
	fs.StringVar(&s.statsPath, "stats", "", "stats file: a line every -stats-every (default: none)")
	fs.DurationVar(&s.statsEvery, "stats-every", time.Second, "stats sampling interval")
	fs.DurationVar(&s.delay, "delay", 20*time.Millisecond, "listener work per message")
	fs.StringVar(&s.poison, "poison", "", "id of a message that always gets ReconsumeLater")
	fs.IntVar(&s.maxReconsume, "max-reconsume", -1, "WithMaxReconsumeTimes (-1: the library default, 16)")
	fs.IntVar(&s.goroutines, "goroutines", 20, "WithConsumeGoroutineNums")
	fs.IntVar(&s.pullBatch, "pull-batch", 32, "WithPullBatchSize")
	fs.DurationVar(&s.persist, "persist-interval", 5*time.Second, "WithPersistConsumerOffsetInterval")
	fs.DurationVar(&s.rebalance, "rebalance-interval", 20*time.Second, "WithRebalanceInterval")
	fs.DurationVar(&s.heartbeat, "heartbeat-interval", 30*time.Second, "WithHeartbeatInterval")
	fs.DurationVar(&s.pollNameServer, "poll-interval", 30*time.Second, "WithPollNameServerInterval")
	fs.DurationVar(&s.takeover, "takeover-grace", time.Second, "WithTakeoverGrace")
	fs.DurationVar(&s.shutdownTimeout, "shutdown-timeout", 10*time.Second, "context of Shutdown on SIGTERM")
	fs.DurationVar(&s.startTimeout, "start-timeout", 20*time.Second, "context of Start")
	fs.StringVar(&s.instance, "instance", "", "WithInstanceName (default: the library's, pid and time)")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	switch {
	case fs.NArg() > 0:
		return s, fmt.Errorf("unexpected arguments %q", fs.Args())
	case s.namesrv == "":
		return s, errors.New("-namesrv is required")
	case s.records == "":
		return s, errors.New("-records is required")
	case s.delay < 0:
		return s, fmt.Errorf("-delay %v is negative", s.delay)
	case s.statsEvery <= 0:
		return s, fmt.Errorf("-stats-every %v is not positive", s.statsEvery)
	}
	return s, nil
}

// options turns the settings into consumer options.
func (s settings) options(log consumer.Logger) []consumer.Option {
	opts := []consumer.Option{
		consumer.WithNameServers(s.namesrv),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithMaxReconsumeTimes(s.maxReconsume),
		consumer.WithConsumeGoroutineNums(s.goroutines),
		consumer.WithPullBatchSize(s.pullBatch),
		consumer.WithPersistConsumerOffsetInterval(s.persist),
		consumer.WithRebalanceInterval(s.rebalance),
		consumer.WithHeartbeatInterval(s.heartbeat),
		consumer.WithPollNameServerInterval(s.pollNameServer),
		consumer.WithTakeoverGrace(s.takeover),
		consumer.WithLogger(log),
	}
	if s.instance != "" {
		opts = append(opts, consumer.WithInstanceName(s.instance))
	}
	return opts
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	s, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "relconsumer:", err)
		}
		return 2
	}
	if err := consume(ctx, s, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "relconsumer:", err)
		return 1
	}
	return 0
}

// consume runs the consumer until ctx ends, then shuts it down.
func consume(ctx context.Context, s settings, stdout, stderr io.Writer) error {
	rec, err := openRecorder(s.records, os.Getpid(), s.poison)
	if err != nil {
		return err
	}
	defer rec.close()
	logOut := stderr
	if s.logPath != "" {
		f, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		logOut = f
	}
	log := newLineLogger(logOut, consumer.LogInfo)

	pc, err := consumer.NewPushConsumer(s.group, s.options(log)...)
	if err != nil {
		return err
	}
	if err := pc.Subscribe(s.topic, consumer.All()); err != nil {
		return err
	}
	if err := pc.RegisterListener(consumer.ConcurrentlyFunc(rec.listener(s.delay))); err != nil {
		return err
	}
	var stats *sampler
	if s.statsPath != "" {
		if stats, err = startSampler(s.statsPath, s.statsEvery, rec.handled.Load); err != nil {
			return err
		}
		defer stats.stop()
	}
	sctx, cancel := context.WithTimeout(ctx, s.startTimeout)
	err = pc.Start(sctx)
	cancel()
	if err != nil {
		return fmt.Errorf("Start: %w", err)
	}
	log.Log(consumer.LogInfo, "relconsumer started", "pid", os.Getpid())
	fmt.Fprintf(stdout, "started pid %d\n", os.Getpid())
	<-ctx.Done()

	log.Log(consumer.LogInfo, "relconsumer shutting down", "pid", os.Getpid())
	began := time.Now()
	sdctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout)
	defer cancel()
	err = pc.Shutdown(sdctx)
	log.Log(consumer.LogInfo, "relconsumer shut down", "took", time.Since(began).String(), "err", fmt.Sprint(err))
	if err != nil {
		return fmt.Errorf("Shutdown: %w", err)
	}
	return rec.err()
}
