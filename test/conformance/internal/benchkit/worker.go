package benchkit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"time"
)

// Options is what a worker's client is told.
type Options struct {
	NameServer   string
	Topic        string
	Group        string
	Instance     string // instance name for the client id
	PullBatch    int    // 0: the client's default
	ConsumeBatch int    // 0: the client's default
	// Serialize is the header serialization to request in, "json" or "rocketmq"; only
	// the raw puller can be told (both clients use their defaults).
	Serialize string
	// FromLast starts a new group at the queues' ends (latency, idle) instead of their
	// beginnings (consume).
	FromLast bool
}

// Client is one client under test, as a worker runs it.
type Client interface {
	// Start starts consuming o.Topic as o.Group; the listener reports to sink. It
	// returns once the client says it has started.
	Start(o Options, sink *Sink) error
	// Shutdown stops the client.
	Shutdown(ctx context.Context) error
}

// TurnaroundReporter is a Client that measures its pull turnaround: from reading a pull's
// FOUND answer to sending the queue's next pull, when nothing held that pull back.
type TurnaroundReporter interface {
	// Turnaround returns how many pulls were measured and their p50 and p99.
	Turnaround() (n int64, p50, p99 time.Duration)
}

// Mode names.
const (
	ModeConsume = "consume"
	ModeLatency = "latency"
	ModeIdle    = "idle"
)

// Main runs a worker for client name: it parses args, runs the mode, prints the result
// line to stdout and returns the process exit code.
func Main(name string, client Client, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	fs.StringVar(&o.NameServer, "namesrv", "", "name server host:port (required)")
	fs.StringVar(&o.Topic, "topic", "", "topic (required)")
	fs.StringVar(&o.Group, "group", "", "consumer group (required; use a fresh one per run)")
	fs.StringVar(&o.Instance, "instance", "", "instance name (default: the group)")
	fs.IntVar(&o.PullBatch, "pull-batch", 0, "pull batch size (0: the client's default)")
	fs.IntVar(&o.ConsumeBatch, "consume-batch", 0, "consume batch size (0: the client's default)")
	fs.StringVar(&o.Serialize, "serialize", "json", "raw puller: request header serialization, json or rocketmq")
	mode := fs.String("mode", ModeConsume, "consume, latency or idle")
	variant := fs.String("variant", "default", "a label for the result")
	n := fs.Int64("n", 0, "consume and latency: messages to receive")
	timeout := fs.Duration("timeout", 10*time.Minute, "consume and latency: give up after this long")
	settle := fs.Duration("settle", 10*time.Second, "idle: wait this long after Start before the window")
	window := fs.Duration("window", 60*time.Second, "idle: the measured window")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the consume phase (idle: of the window) to this file")
	traceFile := fs.String("trace", "", "write an execution trace of the consume phase to this file (it slows the run: not for figures)")
	memProfile := fs.String("memprofile", "", "write an allocation profile (allocs) at the end of the consume phase")
	memRate := fs.Int("memprofilerate", 0, "runtime.MemProfileRate when -memprofile is set (0: Go's default)")
	appHeap := fs.Int("app-heap", 0, "hold this many MiB of live, linked objects for the whole run, as the service a client runs in would (0: none)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.NameServer == "" || o.Topic == "" || o.Group == "" {
		fmt.Fprintln(stderr, name+": -namesrv, -topic and -group are required")
		return 2
	}
	if *mode != ModeIdle && *n <= 0 {
		fmt.Fprintln(stderr, name+": -n must be positive")
		return 2
	}
	if o.Instance == "" {
		o.Instance = o.Group
	}
	o.FromLast = *mode != ModeConsume
	if *memProfile != "" && *memRate > 0 {
		runtime.MemProfileRate = *memRate
	}
	if *appHeap < 0 {
		fmt.Fprintln(stderr, name+": -app-heap must not be negative")
		return 2
	}
	held := NewAppHeap(*appHeap) // before the client starts: its pacing from the first collection
	r := Result{Client: name, Mode: *mode, Variant: *variant, Topic: o.Topic, N: *n}
	w := worker{name: name, client: client, o: o, out: stdout, r: &r}
	var err error
	switch *mode {
	case ModeConsume, ModeLatency:
		err = w.consume(*n, *mode == ModeLatency, *timeout, profiles{cpu: *cpuProfile, mem: *memProfile, trace: *traceFile})
	case ModeIdle:
		err = w.idle(*settle, *window, *cpuProfile)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		r.Error = err.Error()
	}
	fmt.Fprintln(stdout, FormatResult(&r))
	runtime.KeepAlive(held) // live through the measured phase
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if w.started {
		if err := client.Shutdown(ctx); err != nil {
			fmt.Fprintf(stderr, "%s: shutdown: %v\n", name, err)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

type worker struct {
	name    string
	client  Client
	o       Options
	out     io.Writer
	r       *Result
	started bool
}

func (w *worker) line(s string) { fmt.Fprintln(w.out, s) }

// profiles names the files a consume run writes its profiles to; empty: none.
type profiles struct {
	cpu, mem, trace string
}

// consume runs the consume and latency modes.
func (w *worker) consume(n int64, timing bool, timeout time.Duration, p profiles) error {
	samples := 0
	if timing {
		samples = int(n)
	}
	sink := NewSink(n, timing, samples)
	sampler := StartSampler(10 * time.Millisecond)
	defer sampler.Stop()
	stopProfile, err := startCPUProfile(p.cpu)
	if err != nil {
		return err
	}
	stopTrace, err := startTrace(p.trace)
	if err != nil {
		stopProfile()
		return err
	}
	before := TakeUsage(true)
	if err := w.client.Start(w.o, sink); err != nil {
		stopTrace()
		stopProfile()
		return fmt.Errorf("start: %w", err)
	}
	w.started = true
	w.line(LineReady)
	select {
	case <-sink.Done():
	case <-time.After(timeout):
		err = fmt.Errorf("timed out after %v with %d of %d messages", timeout, sink.Count(), n)
	}
	after := TakeUsage(true)
	stopTrace()
	stopProfile()
	if p.mem != "" {
		if perr := writeAllocs(p.mem); perr != nil && err == nil {
			err = perr
		}
	}
	r := w.r
	r.Got = sink.Count()
	first, last := sink.firstAt.Load(), sink.lastAt.Load()
	if last == 0 {
		last = after.At.UnixNano()
	}
	if first > 0 {
		r.Seconds = float64(last-first) / 1e9
		r.StartSeconds = float64(first-before.At.UnixNano()) / 1e9
		if r.Seconds > 0 {
			r.MsgsPerSec = float64(min(r.Got, n)) / r.Seconds
		}
	}
	r.CPUSeconds = (after.CPU - before.CPU).Seconds()
	if r.Got > 0 {
		r.CPUPerMillion = r.CPUSeconds / float64(r.Got) * 1e6
		r.MallocsPerMsg = float64(after.Mallocs-before.Mallocs) / float64(r.Got)
		r.BytesPerMsg = float64(after.Bytes-before.Bytes) / float64(r.Got)
	}
	r.NumGC = after.NumGC - before.NumGC
	if r.Got > 0 && before.Reads >= 0 && after.Reads >= 0 {
		r.ReadsPerMsg = float64(after.Reads-before.Reads) / float64(r.Got)
		r.WritesPerMsg = float64(after.Writes-before.Writes) / float64(r.Got)
	}
	r.MaxRSSKiB = after.MaxRSS
	r.RSSKiB = RSS()
	r.PeakGoroutines, _ = sampler.Stats()
	if tr, ok := w.client.(TurnaroundReporter); ok {
		var p50, p99 time.Duration
		r.TurnaroundCount, p50, p99 = tr.Turnaround()
		r.TurnaroundP50Micros, r.TurnaroundP99Micros = micros(int64(p50)), micros(int64(p99))
	}
	if timing {
		lat := slices.Clone(sink.Latencies())
		slices.Sort(lat)
		r.LatencyCount = len(lat)
		r.P50Micros = micros(Percentile(lat, 0.50))
		r.P99Micros = micros(Percentile(lat, 0.99))
		r.P999Micros = micros(Percentile(lat, 0.999))
		if len(lat) > 0 {
			r.MaxMicros = micros(lat[len(lat)-1])
		}
	}
	return err
}

// idle runs the idle mode: start, settle, then measure a window with no traffic (and
// profile it, when cpuProfile is set).
func (w *worker) idle(settle, window time.Duration, cpuProfile string) error {
	sink := NewSink(1<<62, false, 0)
	// Ten samples a second: the sampler's own wake-ups count in the process's CPU.
	sampler := StartSampler(100 * time.Millisecond)
	defer sampler.Stop()
	if err := w.client.Start(w.o, sink); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	w.started = true
	w.line(LineReady)
	time.Sleep(settle)
	sampler.Reset()
	stopProfile, err := startCPUProfile(cpuProfile)
	if err != nil {
		return err
	}
	before := TakeUsage(false)
	w.line(LineWindowStart)
	time.Sleep(window)
	after := TakeUsage(false)
	stopProfile()
	w.line(LineWindowEnd)
	r := w.r
	r.WindowSeconds = after.At.Sub(before.At).Seconds()
	r.CPUSeconds = (after.CPU - before.CPU).Seconds()
	r.CPUPercent = 100 * r.CPUSeconds / r.WindowSeconds
	r.PeakGoroutines, r.AvgGoroutines = sampler.Stats()
	r.MaxRSSKiB = after.MaxRSS
	r.RSSKiB = RSS()
	r.Got = sink.Count()
	if r.Got > 0 {
		return errors.New("idle: messages arrived during the idle run")
	}
	return nil
}

// startCPUProfile starts a CPU profile written to path, when path is set; stop ends it
// and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	return startRecording(path, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startTrace starts an execution trace written to path, when path is set; stop ends it
// and closes the file.
func startTrace(path string) (stop func(), err error) {
	return startRecording(path, trace.Start, trace.Stop)
}

// startRecording starts a recording (a CPU profile, an execution trace) written to path
// by start, when path is set; the stop it returns ends it with end and closes the file.
func startRecording(path string, start func(io.Writer) error, end func()) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		end()
		f.Close()
	}, nil
}

func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}
