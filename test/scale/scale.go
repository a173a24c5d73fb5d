package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/internal/procstat"
)

// Config says what to run.
type Config struct {
	// NameServer is the cluster's name server, host:port.
	NameServer string
	// Topics are subscribed by every consumer (with "*").
	Topics []string
	// Consumers is how many consumers to start in this process, each in a group of its
	// own (GroupPrefix-0, GroupPrefix-1, ...), so each takes every queue.
	Consumers   int
	GroupPrefix string
	// Settle is how long to wait after the last Start before the idle window.
	Settle time.Duration
	// Idle is the window in which CPU, requests, passes and heartbeats are counted.
	Idle time.Duration
	// Requests returns the requests the cluster received so far, by code (nil: not
	// measured).
	Requests func(context.Context) (map[int32]int, error)
	// Options are added to every consumer's (after the name server and logger).
	Options []consumer.Option
	// IdleStarts, when set, is called as the idle window begins (to start a profile).
	IdleStarts func() error
	// Progress gets a line per step; nil: none.
	Progress io.Writer
}

// Result is what a run measured.
type Result struct {
	Consumers int
	Topics    int
	Queues    int // assigned to each consumer after its first pass, retry topic included

	Start     []time.Duration // each consumer's Start
	FirstPass []time.Duration // each consumer's first rebalance pass (inside its Start)

	// In the idle window:
	Passes         []time.Duration // rebalance passes, every consumer's
	Heartbeats     []time.Duration // heartbeats (to every broker, in parallel)
	HeartbeatBytes int             // a heartbeat's body
	IdleCPU        float64         // user+system CPU seconds per second: 1 is one core
	IdleRequests   map[int32]float64

	// The process before the consumers and at the end of the idle window.
	GoroutinesBefore, Goroutines int
	RSSBefore, RSS               int64 // bytes; 0 where not measured
	HeapInuse                    uint64
}

// GoroutinesPerConsumer is the goroutines the consumers added, per consumer.
func (r Result) GoroutinesPerConsumer() float64 {
	return float64(r.Goroutines-r.GoroutinesBefore) / float64(max(r.Consumers, 1))
}

// Run starts the consumers one after the other, lets them settle, measures an idle
// window, and returns what it measured and a function that shuts the consumers down.
// On error, the consumers already started are shut down.
func Run(ctx context.Context, cfg Config) (Result, func(context.Context) error, error) {
	res := Result{Consumers: cfg.Consumers, Topics: len(cfg.Topics)}
	runtime.GC()
	res.GoroutinesBefore, res.RSSBefore = runtime.NumGoroutine(), procstat.RSS(os.Getpid())

	var (
		pcs  []*consumer.PushConsumer
		logs []*costLog
	)
	stop := func(ctx context.Context) error {
		var errs []error
		for _, pc := range pcs {
			errs = append(errs, pc.Shutdown(ctx))
		}
		return errors.Join(errs...)
	}
	fail := func(err error) (Result, func(context.Context) error, error) {
		return res, nil, errors.Join(err, stop(context.WithoutCancel(ctx)))
	}
	for i := range cfg.Consumers {
		log := &costLog{}
		pc, err := newConsumer(cfg, fmt.Sprintf("%s-%d", cfg.GroupPrefix, i), log)
		if err != nil {
			return fail(err)
		}
		began := time.Now()
		if err := pc.Start(ctx); err != nil {
			return fail(fmt.Errorf("scale: consumer %d: %w", i, err))
		}
		took := time.Since(began)
		pcs, logs = append(pcs, pc), append(logs, log)
		res.Start = append(res.Start, took)
		passes, _ := log.snapshot()
		if len(passes) > 0 {
			res.FirstPass = append(res.FirstPass, passes[0].took)
			res.Queues = passes[0].queues
		}
		progressf(cfg.Progress, "consumer %d of %d started in %v (%d queues)", i+1, cfg.Consumers, took.Round(time.Millisecond), res.Queues)
	}
	if err := sleep(ctx, cfg.Settle); err != nil {
		return fail(err)
	}

	from, cpu0 := time.Now(), procstat.CPUTime()
	var req0 map[int32]int
	if cfg.Requests != nil {
		var err error
		if req0, err = cfg.Requests(ctx); err != nil {
			return fail(err)
		}
	}
	if cfg.IdleStarts != nil {
		if err := cfg.IdleStarts(); err != nil {
			return fail(err)
		}
	}
	progressf(cfg.Progress, "idle for %v", cfg.Idle)
	if err := sleep(ctx, cfg.Idle); err != nil {
		return fail(err)
	}
	window := time.Since(from)
	res.IdleCPU = (procstat.CPUTime() - cpu0).Seconds() / window.Seconds()
	if cfg.Requests != nil {
		req1, err := cfg.Requests(ctx)
		if err != nil {
			return fail(err)
		}
		res.IdleRequests = make(map[int32]float64)
		for code, n := range req1 {
			if d := n - req0[code]; d > 0 {
				res.IdleRequests[code] = float64(d) / window.Seconds()
			}
		}
	}
	for _, log := range logs {
		passes, heartbeats := log.snapshot()
		res.Passes = append(res.Passes, since(passes, from)...)
		res.Heartbeats = append(res.Heartbeats, since(heartbeats, from)...)
		if len(heartbeats) > 0 {
			res.HeartbeatBytes = heartbeats[len(heartbeats)-1].bytes
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.Goroutines, res.RSS, res.HeapInuse = runtime.NumGoroutine(), procstat.RSS(os.Getpid()), ms.HeapInuse
	return res, stop, nil
}

func newConsumer(cfg Config, group string, log *costLog) (*consumer.PushConsumer, error) {
	opts := append([]consumer.Option{consumer.WithNameServers(cfg.NameServer), consumer.WithLogger(log)}, cfg.Options...)
	pc, err := consumer.NewPushConsumer(group, opts...)
	if err != nil {
		return nil, err
	}
	for _, t := range cfg.Topics {
		if err := pc.Subscribe(t, consumer.All()); err != nil {
			return nil, err
		}
	}
	err = pc.RegisterListener(consumer.ConcurrentlyFunc(func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		return consumer.ConsumeSuccess
	}))
	return pc, err
}

// SumRequests adds up request counts by code over servers.
func SumRequests(byServer map[string]map[int32]int) map[int32]int {
	out := make(map[int32]int)
	for _, counts := range byServer {
		for code, n := range counts {
			out[code] += n
		}
	}
	return out
}

// Codes returns the codes of m, sorted.
func Codes[V any](m map[int32]V) []int32 { return slices.Sorted(maps.Keys(m)) }

func progressf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "scale: "+format+"\n", args...)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
