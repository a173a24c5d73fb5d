package benchrun

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// Settings of the consume scenario.
const (
	settingDefault = "default"
	settingTuned   = "tuned"
	tunedPull      = 128
	tunedConsume   = 32
	consumeQueues  = 8
)

// ConsumeRun is one consume-all run of one client.
type ConsumeRun struct {
	Workload string
	Round    int
	benchkit.Result
	// BrokerCPUPerMillion is the fake broker process's CPU seconds per million
	// messages during the run (0 on a real cluster).
	BrokerCPUPerMillion float64
	// RequestsPerThousand are the requests the fake cluster received during the run
	// per 1,000 messages consumed, by request code (nil on a real cluster).
	RequestsPerThousand map[int32]float64 `json:",omitempty"`
	// MachineIdle and MachineSteal are the shares of all the machine's cores' time
	// during the worker's process that were idle and that the hypervisor took for other
	// guests (-1 when /proc/stat could not be read): whether the run was bound by CPU, and
	// how much of it the virtual machine lost.
	MachineIdle, MachineSteal float64
}

// LatencyRun is one latency run of one client.
type LatencyRun struct {
	Round int
	Rate  int
	Sent  int
	benchkit.Result
}

// IdleRun is the idle run of one client.
type IdleRun struct {
	benchkit.Result
	Queues int
	// Requests are the requests per second the client sent, by request code (fake
	// cluster only; Counted says whether they were counted).
	Requests map[int32]float64
	Counted  bool
}

// Report is what a Run measured.
type Report struct {
	NameServer string // "" when the fake cluster ran
	Consume    []ConsumeRun
	Latency    []LatencyRun
	Idle       []IdleRun
}

type runner struct {
	cfg    Config
	bin    string
	fake   *fakeProcess
	admin  *admin
	nsAddr string
	id     string
	report Report
}

// Run runs the benchmark cfg describes and prints its tables to cfg.Out.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, id: fmt.Sprintf("%06x", rand.Uint32()&0xffffff)}
	r.report.NameServer = cfg.NameServer
	r.bin = cfg.BinDir
	if r.bin == "" {
		dir, err := os.MkdirTemp("", "rmqpush-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		r.bin = dir
	}
	if cfg.Build || cfg.BinDir == "" {
		r.logf("building the workers and the fake broker into %s", r.bin)
		if err := build(ctx, r.bin); err != nil {
			return nil, err
		}
	}
	if cfg.has("consume") || cfg.has("latency") {
		if err := r.connect(ctx); err != nil {
			return nil, err
		}
		defer r.disconnect()
		if cfg.BusyCore {
			b, err := startBurner(filepath.Join(r.bin, binBurn))
			if err != nil {
				return nil, err
			}
			r.logf("busy core: %s (pid %d)", binBurn, b.cmd.Process.Pid)
			defer b.stop()
		}
	}
	if cfg.WorkerGOMAXPROCS > 0 {
		r.logf("every client's worker runs with GOMAXPROCS=%d", cfg.WorkerGOMAXPROCS)
	}
	if cfg.AppHeapMiB > 0 {
		r.logf("every client's worker holds %d MiB of live objects, as a service's own heap", cfg.AppHeapMiB)
	}
	if cfg.has("consume") {
		for _, w := range cfg.Workloads {
			if err := r.consumeAll(ctx, w); err != nil {
				return &r.report, err
			}
		}
	}
	if cfg.has("latency") {
		if err := r.latency(ctx); err != nil {
			return &r.report, err
		}
	}
	if cfg.has("idle") {
		if err := r.idle(ctx); err != nil {
			return &r.report, err
		}
	}
	r.report.write(cfg.Out, &cfg)
	return &r.report, nil
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// connect starts the fake cluster (unless a real one was given) and the admin client.
func (r *runner) connect(ctx context.Context) error {
	r.nsAddr = r.cfg.NameServer
	broker := r.cfg.Broker
	if r.nsAddr == "" {
		f, err := startFake(ctx, filepath.Join(r.bin, binFake), r.cfg.PullServiceTime, r.cfg.pops(), r.cfg.Log)
		if err != nil {
			return err
		}
		r.fake = f
		r.nsAddr, broker = f.nameSrv, f.broker
		r.logf("fake cluster (pid %d): name server %s, broker %s", f.cmd.Process.Pid, f.nameSrv, f.broker)
	}
	a, err := newAdmin(r.nsAddr, broker)
	if err != nil {
		return err
	}
	r.admin = a
	return nil
}

func (r *runner) disconnect() {
	if r.admin != nil {
		r.admin.close()
	}
	if r.fake != nil {
		r.fake.stop()
	}
}

func (r *runner) record(v any) {
	if r.cfg.Results == nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		fmt.Fprintln(r.cfg.Results, string(b))
	}
}

// requestCounts returns the fake cluster's request counts, or nil (a real cluster, or
// the count could not be read: the run then reports none).
func (r *runner) requestCounts(ctx context.Context) map[int32]int {
	if r.fake == nil {
		return nil
	}
	counts, err := r.fake.requests(ctx)
	if err != nil {
		r.logf("reading the fake cluster's request counts: %v", err)
		return nil
	}
	return counts
}

func (r *runner) brokerCPU() time.Duration {
	switch {
	case r.fake != nil:
		return r.fake.cpu()
	case r.cfg.BrokerPID > 0:
		d, err := benchkit.ProcessCPU(r.cfg.BrokerPID)
		if err != nil {
			r.logf("reading the broker's CPU time (pid %d): %v", r.cfg.BrokerPID, err)
			return 0
		}
		return d
	default:
		return 0
	}
}

// machineCPU reads the machine's CPU time, or returns nil (logged) when it cannot.
func (r *runner) machineCPU() *benchkit.MachineCPU {
	m, err := benchkit.ReadMachineCPU()
	if err != nil {
		r.logf("reading the machine's CPU time: %v", err)
		return nil
	}
	return &m
}

// machineShares returns the shares of the machine's time between two readings that were
// idle and stolen, or -1 and -1 (logged) when either reading or their difference failed.
func (r *runner) machineShares(before, after *benchkit.MachineCPU) (idle, steal float64) {
	if before == nil || after == nil {
		return -1, -1 // machineCPU logged why
	}
	idle, steal, err := after.Shares(*before)
	if err != nil {
		r.logf("the machine's idle and stolen time over this run: %v", err)
		return -1, -1
	}
	return idle, steal
}

// prepareGroup sets group to POP on topic when client consumes by POP.
func (r *runner) prepareGroup(ctx context.Context, client, group, topic string) error {
	if !isPop(client) {
		return nil
	}
	return r.admin.setPop(ctx, group, topic)
}

// step is one worker run of a consume-all round: a client with a setting.
type step struct{ client, setting string }

// rotated returns steps rotated left by k: each round starts with the next client, so
// that no client always runs right after the raw puller (on a real broker the run that
// follows it paid up to 0.7 CPU-s per M more in a set of 4 rounds) or last.
func rotated(steps []step, k int) []step {
	if len(steps) == 0 {
		return nil
	}
	k %= len(steps)
	return append(append([]step(nil), steps[k:]...), steps[:k]...)
}

// consumeAll preloads a workload and runs the rounds of clients over it.
func (r *runner) consumeAll(ctx context.Context, w Workload) error {
	topic := fmt.Sprintf("bench-%s-%s", w.Name(), r.id)
	r.logf("consume-all %d x %s: creating %s with %d queues and preloading", w.N, w.Name(), topic, consumeQueues)
	if err := r.admin.createTopic(ctx, topic, consumeQueues); err != nil {
		return err
	}
	start := time.Now()
	if err := r.admin.preload(ctx, topic, w.N, w.Size); err != nil {
		return err
	}
	// A real broker builds its consume queues after it answers the sends: wait for them.
	var stored int64
	var err error
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if stored, err = r.admin.maxOffsets(ctx, topic); err != nil {
			return err
		}
		if stored == int64(w.N) || time.Now().After(deadline) {
			break
		}
	}
	if stored != int64(w.N) {
		return fmt.Errorf("benchrun: %s holds %d messages after preloading %d", topic, stored, w.N)
	}
	r.logf("preloaded %d messages in %v", w.N, time.Since(start).Round(time.Millisecond))
	var steps []step
	settings := []string{settingDefault}
	if r.cfg.Tuned {
		settings = append(settings, settingTuned)
	}
	for _, s := range settings {
		for _, c := range r.cfg.Clients {
			steps = append(steps, step{c, s})
		}
	}
	for round := 1; round <= r.cfg.Runs; round++ {
		order := rotated(steps, round-1)
		if r.cfg.Ceiling {
			order = append([]step{{"raw", settingDefault}}, order...)
		}
		for _, s := range order {
			group := fmt.Sprintf("bench-%s-%s-%s-%d-%s", s.client, s.setting, w.Name(), round, r.id)
			args := []string{"-mode", benchkit.ModeConsume, "-namesrv", r.nsAddr, "-topic", topic,
				"-group", group, "-n", strconv.Itoa(w.N), "-variant", s.setting,
				"-timeout", r.cfg.WorkerTimeout.String()}
			if s.setting == settingTuned {
				args = append(args, "-pull-batch", strconv.Itoa(tunedPull), "-consume-batch", strconv.Itoa(tunedConsume))
			}
			if r.cfg.ProfileDir != "" && s.client != "raw" && s.client != "peer" {
				base := filepath.Join(r.cfg.ProfileDir, fmt.Sprintf("%s-%s-%s-%d", s.client, w.Name(), s.setting, round))
				args = append(args, r.profileArgs(base)...)
			}
			if err := r.prepareGroup(ctx, s.client, group, topic); err != nil {
				return err
			}
			cpu0, req0, mach0 := r.brokerCPU(), r.requestCounts(ctx), r.machineCPU()
			res, err := runWorker(ctx, r.workerBin(s.client), r.workerArgs(args), r.workerEnv(), r.cfg.WorkerTimeout, r.cfg.Log, nil)
			cpu1, req1, mach1 := r.brokerCPU(), r.requestCounts(ctx), r.machineCPU()
			if err != nil {
				return err
			}
			res.Client = s.client // a worker names its library, not its build
			run := ConsumeRun{Workload: w.Name(), Round: round, Result: res}
			run.MachineIdle, run.MachineSteal = r.machineShares(mach0, mach1)
			if res.Got > 0 && cpu1 > cpu0 {
				run.BrokerCPUPerMillion = (cpu1 - cpu0).Seconds() / float64(res.Got) * 1e6
			}
			if r.fake != nil && res.Got > 0 {
				if req0 != nil && req1 != nil {
					run.RequestsPerThousand = map[int32]float64{}
					for code, n := range req1 {
						if d := n - req0[code]; d > 0 {
							run.RequestsPerThousand[code] = float64(d) / float64(res.Got) * 1000
						}
					}
				}
			}
			r.report.Consume = append(r.report.Consume, run)
			r.record(run)
			r.logf("  %-7s %-7s round %d: %8.0f msg/s, %5.2f CPU-s/M, %5.2f allocs/msg, %4.0f B/msg, %.3f reads and %.3f writes/msg, %d GCs, peak RSS %5.1f MB, peak goroutines %d, broker %5.2f CPU-s/M, machine %s, requests per 1,000 msgs: %s%s",
				s.client, s.setting, round, res.MsgsPerSec, res.CPUPerMillion, res.MallocsPerMsg, res.BytesPerMsg,
				res.ReadsPerMsg, res.WritesPerMsg, res.NumGC, float64(res.MaxRSSKiB)/1024, res.PeakGoroutines, run.BrokerCPUPerMillion,
				formatMachine(run.MachineIdle, run.MachineSteal), formatRequests(run.RequestsPerThousand), formatTurnaround(res))
			time.Sleep(time.Second) // let the broker forget the group's connection
		}
	}
	return nil
}

// latency runs the latency scenario for each client in turn.
func (r *runner) latency(ctx context.Context) error {
	interval := time.Second / time.Duration(r.cfg.LatencyRate)
	total := int(r.cfg.LatencyWarmup/interval) + int(r.cfg.LatencyDuration/interval)
	for round := 1; round <= r.cfg.LatencyRuns; round++ {
		for _, c := range r.cfg.Clients {
			topic := fmt.Sprintf("bench-latency-%s-%d-%s", c, round, r.id)
			if err := r.admin.createTopic(ctx, topic, consumeQueues); err != nil {
				return err
			}
			group := fmt.Sprintf("bench-latency-%s-%d-%s", c, round, r.id)
			timeout := r.cfg.Settle + r.cfg.LatencyWarmup + r.cfg.LatencyDuration + time.Minute
			args := []string{"-mode", benchkit.ModeLatency, "-namesrv", r.nsAddr, "-topic", topic,
				"-group", group, "-n", strconv.Itoa(total), "-timeout", timeout.String()}
			if err := r.prepareGroup(ctx, c, group, topic); err != nil {
				return err
			}
			r.logf("latency %s round %d: %d msg/s for %v (+%v warm-up) to %s", c, round, r.cfg.LatencyRate,
				r.cfg.LatencyDuration, r.cfg.LatencyWarmup, topic)
			var (
				sent    int
				sendErr error
				wg      sync.WaitGroup
			)
			pctx, cancel := context.WithCancel(ctx)
			res, err := runWorker(ctx, r.workerBin(c), r.workerArgs(args), r.workerEnv(), timeout, r.cfg.Log, func(line string) {
				if line != benchkit.LineReady {
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					select {
					case <-time.After(r.cfg.Settle):
					case <-pctx.Done():
						return
					}
					sent, sendErr = produceSteady(pctx, r.nsAddr, topic, r.cfg.LatencyRate, r.cfg.LatencyWarmup, r.cfg.LatencyDuration)
				}()
			})
			cancel()
			wg.Wait()
			if sendErr != nil {
				return sendErr
			}
			if err != nil {
				return err
			}
			res.Client = c
			run := LatencyRun{Round: round, Rate: r.cfg.LatencyRate, Sent: sent, Result: res}
			r.report.Latency = append(r.report.Latency, run)
			r.record(run)
			r.logf("  %s: p50 %.2f ms, p99 %.2f ms, p999 %.2f ms, max %.2f ms over %d messages",
				c, res.P50Micros/1000, res.P99Micros/1000, res.P999Micros/1000, res.MaxMicros/1000, res.LatencyCount)
		}
	}
	return nil
}

// idle runs each client alone on a topic with IdleQueues queues and no traffic.
func (r *runner) idle(ctx context.Context) error {
	for _, c := range r.cfg.Clients {
		if err := r.idleOne(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) idleOne(ctx context.Context, c string) error {
	topic := fmt.Sprintf("bench-idle-%s-%s", c, r.id)
	nsAddr := r.cfg.NameServer
	var cluster *fakebroker.Cluster
	if nsAddr == "" {
		// A fake of this process, so its request counters can be read; only the
		// worker connects to it.
		var err error
		cluster, err = fakebroker.NewCluster(fakebroker.WithTopic(topic, r.cfg.IdleQueues), fakebroker.WithRocketMQ5(isPop(c)))
		if err != nil {
			return err
		}
		defer cluster.Close()
		nsAddr = cluster.NameServerAddr()
	} else if err := r.admin.createTopic(ctx, topic, r.cfg.IdleQueues); err != nil {
		return err
	}
	counts := func() map[int32]int {
		out := cluster.NameServer().RequestCounts()
		for _, b := range cluster.Brokers() {
			for code, n := range b.RequestCounts() {
				out[code] += n
			}
		}
		return out
	}
	var (
		mu       sync.Mutex
		from, to map[int32]int
		t0, t1   time.Time
	)
	group := fmt.Sprintf("bench-idle-%s-%s", c, r.id)
	args := []string{"-mode", benchkit.ModeIdle, "-namesrv", nsAddr, "-topic", topic, "-group", group,
		"-settle", r.cfg.IdleSettle.String(), "-window", r.cfg.IdleWindow.String()}
	if cluster != nil && isPop(c) {
		if err := cluster.SetConsumeMode(group, topic, "POP", 0); err != nil {
			return err
		}
	} else if err := r.prepareGroup(ctx, c, group, topic); err != nil {
		return err
	}
	r.logf("idle %s: %d queues, %v settle, %v window", c, r.cfg.IdleQueues, r.cfg.IdleSettle, r.cfg.IdleWindow)
	timeout := r.cfg.IdleSettle + r.cfg.IdleWindow + time.Minute
	res, err := runWorker(ctx, r.workerBin(c), r.workerArgs(args), r.workerEnv(), timeout, r.cfg.Log, func(line string) {
		if cluster == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch line {
		case benchkit.LineWindowStart:
			from, t0 = counts(), time.Now()
		case benchkit.LineWindowEnd:
			to, t1 = counts(), time.Now()
		}
	})
	if err != nil {
		return err
	}
	res.Client = c
	run := IdleRun{Result: res, Queues: r.cfg.IdleQueues}
	mu.Lock()
	if from != nil && to != nil {
		run.Counted = true
		run.Requests = map[int32]float64{}
		secs := t1.Sub(t0).Seconds()
		for code, n := range to {
			if d := n - from[code]; d > 0 {
				run.Requests[code] = float64(d) / secs
			}
		}
	}
	mu.Unlock()
	r.report.Idle = append(r.report.Idle, run)
	r.record(run)
	r.logf("  %s: CPU %.3f %%, goroutines peak %d mean %.1f, RSS %.1f MB, requests/s %.2f",
		c, res.CPUPercent, res.PeakGoroutines, res.AvgGoroutines, float64(res.RSSKiB)/1024, run.total())
	return nil
}

// total returns the requests per second over every code.
func (r IdleRun) total() float64 {
	t := 0.0
	for _, v := range r.Requests {
		t += v
	}
	return t
}

// profileArgs are the worker flags that write a consume run's profiles to files named
// from base.
func (r *runner) profileArgs(base string) []string {
	args := []string{"-cpuprofile", base + ".cpu.pprof", "-memprofile", base + ".allocs.pprof"}
	if r.cfg.Traces {
		args = append(args, "-trace", base+".trace")
	}
	return args
}
