package reliability

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/test/fakebroker/control"
	"github.com/rmqpush/rmqpush/test/internal/procstat"
)

// SoakConfig sizes a soak (issue 15): consumption at a steady rate for a long time on
// the fake cluster, with a fault every FaultEvery.
type SoakConfig struct {
	Bins     Binaries
	Dir      string    // the run's files go to Dir/soak
	Progress io.Writer // a line per fault and minute; nil: none

	Duration    time.Duration // production at Rate lasts this long (30 min)
	Rate        int           // messages per second (5,000)
	FaultEvery  time.Duration // 1 min: the first at FaultEvery, the last before Duration
	SampleEvery time.Duration // 10 s: RSS, goroutines and connections of each consumer
	Consumers   int           // 3: the last one is the one member churn replaces
	Delay       time.Duration // listener work per message (1 ms)
}

// DefaultSoakConfig is issue 15's soak.
func DefaultSoakConfig() SoakConfig {
	return SoakConfig{Duration: 30 * time.Minute, Rate: 5000, FaultEvery: time.Minute,
		SampleEvery: 10 * time.Second, Consumers: 3, Delay: time.Millisecond}
}

// SoakResult is what a soak measured. Result holds the counts, targets and notes (for
// WriteTable).
type SoakResult struct {
	Result
	Produced     int
	RateAchieved float64 // messages produced per second of production
	Faults       []SoakFault
	Unattributed []string // duplicates that followed no fault (ids)
	Members      []SoakMember
	SamplesPath  string // every sample, tab-separated
}

// SoakFault is one injected fault and the duplicates whose second delivery followed it
// (before the next fault).
type SoakFault struct {
	At         time.Duration // since production began
	Kind       string        // connection drop, broker restart, member churn, SYSTEM_BUSY burst
	Detail     string
	Duplicates []string // ids
}

// SoakMember is a consumer that ran through the whole soak: its samples in the minute
// before the first fault and in the last third of the last minute, and the largest.
type SoakMember struct {
	Name            string
	Begin, End, Max SoakSample
}

// SoakSample is one sample of a consumer process.
type SoakSample struct {
	At          time.Duration
	RSS         int64 // bytes (VmRSS)
	Goroutines  int
	Connections int // open sockets
}

// Soak kinds of fault, in the order they rotate.
var soakFaultKinds = []string{"connection drop", "broker restart", "member churn", "SYSTEM_BUSY burst"}

// Soak runs a soak and returns what it measured. The error reports a soak that could not
// run; targets not met are in the result.
func Soak(ctx context.Context, cfg SoakConfig) (SoakResult, error) {
	dir := filepath.Join(cfg.Dir, "soak")
	if err := os.RemoveAll(dir); err != nil {
		return SoakResult{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return SoakResult{}, err
	}
	e := &env{
		cfg:    Config{Bins: cfg.Bins, Dir: cfg.Dir, Progress: cfg.Progress, Full: true},
		dir:    dir,
		res:    &Result{Scenario: "S", Title: "soak", Dir: dir},
		group:  "relSoak",
		topic:  "RelSoak",
		byPID:  make(map[int]*consumerProc),
		coll:   newCollector(), // left unread: the soak counts with a soakTally
		letter: "S",
	}
	s := &soak{cfg: cfg, e: e, tally: newSoakTally("RelSoak-"), samplesPath: filepath.Join(dir, "samples.tsv")}
	err := s.run(ctx)
	if cerr := e.close(); err == nil {
		err = cerr
	}
	if err != nil {
		e.target("ran to completion", false, "%v", err)
	}
	out := s.result()
	out.Result = *e.res
	return out, err
}

// soak is one soak's run.
type soak struct {
	cfg         SoakConfig
	e           *env
	tally       *soakTally
	produced    atomic.Int64 // by the producer goroutine
	produceErr  error        // the producer's; read after it ended
	prodTime    time.Duration
	faults      []SoakFault
	samples     map[string][]SoakSample // by consumer name
	samplesPath string
	members     []*consumerProc // run through the whole soak
	churned     *consumerProc   // the member churn replaces
	churns      int
}

func (s *soak) run(ctx context.Context) error {
	e, cfg := s.e, s.cfg
	s.samples = make(map[string][]SoakSample)
	if err := e.startCluster(2, 4, 0); err != nil {
		return err
	}
	e.consumerArgs = []string{"-delay", cfg.Delay.String(), "-stats-every", cfg.SampleEvery.String()}
	e.began = time.Now()
	for i := range cfg.Consumers {
		cp, err := s.startConsumer()
		if err != nil {
			return err
		}
		if i < cfg.Consumers-1 {
			s.members = append(s.members, cp)
		} else {
			s.churned = cp
		}
	}
	samples, err := os.Create(s.samplesPath)
	if err != nil {
		return err
	}
	defer samples.Close()
	fmt.Fprintln(samples, "seconds\tconsumer\trss_bytes\tgoroutines\tconnections")

	began := time.Now()
	e.began = began
	prodCtx, stopProducing := context.WithCancel(ctx)
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		s.produceErr = s.produceSteadily(prodCtx, began)
	}()
	defer func() {
		stopProducing()
		<-produced
	}()
	var (
		nextFault   = cfg.FaultEvery
		nextSample  time.Duration
		brokerStart time.Time // a stopped broker starts again then
		stopped     string
		tick        = time.NewTicker(100 * time.Millisecond)
	)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-produced:
			running = false
			continue
		case <-tick.C:
		}
		now := time.Since(began)
		if stopped != "" && time.Now().After(brokerStart) {
			if err := e.cl.Broker(ctx, stopped, "start"); err != nil {
				return err
			}
			e.progressf("%s: started again", stopped)
			stopped = ""
		}
		if now >= nextSample {
			if err := s.sample(samples, now); err != nil {
				return err
			}
			nextSample += cfg.SampleEvery
		}
		if now >= nextFault && nextFault < cfg.Duration {
			b, at, err := s.fault(ctx, now)
			if err != nil {
				return err
			}
			if b != "" {
				stopped, brokerStart = b, at
			}
			nextFault += cfg.FaultEvery
		}
		if err := s.tally.refresh(); err != nil {
			return err
		}
	}
	if s.produceErr != nil {
		return s.produceErr
	}
	if stopped != "" { // the last fault's broker, still down when production ended
		if err := e.cl.Broker(ctx, stopped, "start"); err != nil {
			return err
		}
	}
	if err := s.sample(samples, time.Since(began)); err != nil {
		return err
	}
	e.progressf("production done: %d messages; waiting for the rest", s.produced.Load())
	if err := s.waitConsumed(ctx); err != nil {
		return err
	}
	e.res.Seconds = time.Since(began).Seconds()
	if err := e.stopAll(); err != nil {
		return err
	}
	if err := s.tally.refresh(); err != nil {
		return err
	}
	return e.checkRegressions(ctx)
}

// startConsumer starts a consumer whose records the tally reads.
func (s *soak) startConsumer() (*consumerProc, error) {
	cp, err := s.e.startConsumer()
	if err != nil {
		return nil, err
	}
	s.tally.add(cp.records)
	return cp, nil
}

// produceSteadily stores messages at the configured rate (every 100 ms, what the rate
// owes by then) until the soak's duration has passed.
func (s *soak) produceSteadily(ctx context.Context, began time.Time) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	next := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		now := time.Since(began)
		due := int(min(now, s.cfg.Duration).Seconds() * float64(s.cfg.Rate))
		if due > next {
			ids := make([]string, due-next)
			for i := range ids {
				ids[i] = soakID(s.tally.prefix, next+i)
			}
			if err := s.e.cl.Produce(ctx, s.e.topic, ids); err != nil {
				return err
			}
			next = due
			s.produced.Store(int64(next))
			s.prodTime = min(time.Since(began), s.cfg.Duration)
		}
		if now >= s.cfg.Duration {
			return nil
		}
	}
}

// fault injects the fault due at now. A broker restart returns the broker to start
// again and when.
func (s *soak) fault(ctx context.Context, now time.Duration) (string, time.Time, error) {
	e := s.e
	k := len(s.faults)
	kind := soakFaultKinds[k%len(soakFaultKinds)]
	broker := e.cl.brokers[(k/len(soakFaultKinds))%len(e.cl.brokers)]
	f := SoakFault{At: now, Kind: kind}
	var stopped string
	var startAt time.Time
	switch kind {
	case "connection drop":
		if err := e.cl.Broker(ctx, broker, "close-connections"); err != nil {
			return "", time.Time{}, err
		}
		f.Detail = broker + "'s connections closed"
	case "broker restart":
		if err := e.cl.Broker(ctx, broker, "stop"); err != nil {
			return "", time.Time{}, err
		}
		stopped, startAt = broker, time.Now().Add(soakBrokerDown)
		f.Detail = fmt.Sprintf("%s stopped for %v (data kept)", broker, soakBrokerDown)
	case "member churn":
		old := s.churned
		how := "SIGTERM (Shutdown)"
		var err error
		if s.churns%2 == 0 {
			err = e.termConsumer(old)
		} else {
			how = "SIGKILL"
			err = e.killConsumer(old)
		}
		if err != nil {
			return "", time.Time{}, err
		}
		s.churns++
		if s.churned, err = s.startConsumer(); err != nil {
			return "", time.Time{}, err
		}
		f.Detail = fmt.Sprintf("%s stopped with %s, %s started", old.name, how, s.churned.name)
	case "SYSTEM_BUSY burst":
		for _, b := range e.cl.brokers {
			if err := e.cl.Inject(ctx, b, control.FaultSpec{Code: protocol.RequestPullMessage, Fail: protocol.ResponseSystemBusy,
				For: soakBusyFor.String()}); err != nil {
				return "", time.Time{}, err
			}
		}
		f.Detail = fmt.Sprintf("every pull answered SYSTEM_BUSY for %v", soakBusyFor)
	}
	s.faults = append(s.faults, f)
	e.progressf("fault %d: %s: %s (%d produced, %d consumed, %d duplicates so far)", k+1, kind, f.Detail, s.produced.Load(), s.tally.ok, len(s.tally.dups))
	return stopped, startAt, nil
}

// How long a restarted broker stays down, and a SYSTEM_BUSY burst lasts.
const (
	soakBrokerDown = 5 * time.Second
	soakBusyFor    = 5 * time.Second
)

// sample records every running consumer's RSS, goroutines and open connections.
func (s *soak) sample(w io.Writer, now time.Duration) error {
	for _, cp := range s.e.live() {
		smp := SoakSample{At: now, RSS: procstat.RSS(cp.pidNum), Connections: procstat.Sockets(cp.pidNum)}
		stats, err := readSamples(cp.stats)
		if err != nil {
			return err
		}
		if len(stats) > 0 {
			smp.Goroutines = stats[len(stats)-1].goroutines
		}
		s.samples[cp.name] = append(s.samples[cp.name], smp)
		fmt.Fprintf(w, "%.0f\t%s\t%d\t%d\t%d\n", now.Seconds(), cp.name, smp.RSS, smp.Goroutines, smp.Connections)
	}
	return nil
}

// waitConsumed waits until every message produced is recorded and every committed
// offset is at its queue's end.
func (s *soak) waitConsumed(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if err := s.tally.refresh(); err != nil {
			return err
		}
		produced := int(s.produced.Load())
		why := fmt.Sprintf("%d of %d ids recorded", s.tally.ok, produced)
		if s.tally.ok >= produced {
			ok, what, err := s.e.committed(ctx)
			if err != nil {
				return err
			}
			if ok {
				return nil
			}
			why = what
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reliability: soak not complete 10 minutes after production ended: %s", why)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// result computes the targets and the duplicates' causes.
func (s *soak) result() SoakResult {
	e, cfg := s.e, s.cfg
	produced := int(s.produced.Load())
	out := SoakResult{Produced: produced, Faults: s.faults, SamplesPath: s.samplesPath}
	if s.prodTime > 0 {
		out.RateAchieved = float64(produced) / s.prodTime.Seconds()
	}
	e.res.Messages = produced
	lost, some := s.tally.lost(produced)
	e.res.Lost = lost
	e.res.Duplicates = len(s.tally.dups)
	e.target("0 lost", lost == 0, "%d lost of %d%s", lost, produced, map[bool]string{true: "", false: fmt.Sprintf(" (first: %v)", some)}[lost == 0])
	e.target(fmt.Sprintf("steady %d msg/s", cfg.Rate), out.RateAchieved >= 0.98*float64(cfg.Rate),
		"%d messages in %v: %.0f msg/s", produced, s.prodTime.Round(time.Second), out.RateAchieved)

	began := e.began
	for _, d := range s.tally.dups {
		at := d.second.Sub(began)
		k := -1
		for i, f := range s.faults {
			if f.At <= at {
				k = i
			}
		}
		if k < 0 || at-s.faults[k].At > cfg.FaultEvery {
			out.Unattributed = append(out.Unattributed, d.id)
			continue
		}
		out.Faults[k].Duplicates = append(out.Faults[k].Duplicates, d.id)
	}
	e.target("every duplicate follows a fault", len(out.Unattributed) == 0, "%d duplicates, %d after no fault %v",
		len(s.tally.dups), len(out.Unattributed), out.Unattributed[:min(len(out.Unattributed), 10)])

	// The members that ran throughout: the minute before the first fault against the end.
	for _, cp := range s.members {
		smp := s.samples[cp.name]
		m := SoakMember{Name: cp.name}
		var begin, end []SoakSample
		for _, x := range smp {
			switch {
			case x.At >= cfg.FaultEvery/2 && x.At < cfg.FaultEvery:
				begin = append(begin, x)
			case x.At >= cfg.Duration-cfg.FaultEvery/3:
				end = append(end, x)
			}
			m.Max = SoakSample{RSS: max(m.Max.RSS, x.RSS), Goroutines: max(m.Max.Goroutines, x.Goroutines),
				Connections: max(m.Max.Connections, x.Connections)}
		}
		if len(begin) == 0 || len(end) == 0 {
			e.target(cp.name+": RSS, goroutines and connections end where they began", false, "no samples before the first fault or at the end")
			continue
		}
		m.Begin, m.End = medianSample(begin), medianSample(end)
		out.Members = append(out.Members, m)
		met := m.End.Goroutines <= m.Begin.Goroutines+goroutineSlack && m.End.Connections <= m.Begin.Connections &&
			m.End.RSS <= m.Begin.RSS+soakRSSSlack
		e.target(cp.name+": RSS, goroutines and connections end where they began", met,
			"before the first fault: %s; at the end: %s; largest: %s", m.Begin, m.End, m.Max)
	}
	e.notef("%v at %d msg/s on 2 brokers × 4 queues, %d consumers (listener %v), a fault every %v: %d faults",
		cfg.Duration, cfg.Rate, cfg.Consumers, cfg.Delay, cfg.FaultEvery, len(s.faults))
	return out
}

// soakRSSSlack is how much more RSS a member may have at the end than before the first
// fault: what the GC's pacing moves, not a leak (a leak per fault grows 30 times).
const soakRSSSlack = 16 << 20

func (x SoakSample) String() string {
	return fmt.Sprintf("RSS %.1f MB, %d goroutines, %d connections", float64(x.RSS)/1e6, x.Goroutines, x.Connections)
}

// medianSample takes each figure's median over xs.
func medianSample(xs []SoakSample) SoakSample {
	med := func(f func(SoakSample) int64) int64 {
		v := make([]int64, len(xs))
		for i, x := range xs {
			v[i] = f(x)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return SoakSample{
		RSS:         med(func(x SoakSample) int64 { return x.RSS }),
		Goroutines:  int(med(func(x SoakSample) int64 { return int64(x.Goroutines) })),
		Connections: int(med(func(x SoakSample) int64 { return int64(x.Connections) })),
	}
}

// WriteSoakReport writes the soak's table and targets, then each fault with the
// duplicates that followed it.
func WriteSoakReport(w io.Writer, r SoakResult) error {
	if err := WriteTable(w, []Result{r.Result}); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfaults (duplicates are listed with the last fault before their second delivery):\n")
	for i, f := range r.Faults {
		ids := ""
		if n := len(f.Duplicates); n > 0 {
			ids = fmt.Sprintf(": %s", strings.Join(f.Duplicates[:min(n, 5)], " "))
			if n > 5 {
				ids += fmt.Sprintf(" … (%d more)", n-5)
			}
		}
		fmt.Fprintf(w, "  %2d  %7s  %-17s  %-66s  %d duplicates%s\n", i+1, f.At.Round(time.Second), f.Kind, f.Detail, len(f.Duplicates), ids)
	}
	if len(r.Unattributed) > 0 {
		fmt.Fprintf(w, "  duplicates after no fault: %v\n", r.Unattributed)
	}
	fmt.Fprintf(w, "\nsamples of every consumer: %s\n", r.SamplesPath)
	return nil
}
