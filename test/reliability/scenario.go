package reliability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Config is what every scenario runs with.
type Config struct {
	Bins Binaries
	// Dir is the work directory; each scenario writes its files (records, logs, stats,
	// the fake cluster's output) into a subdirectory named after it.
	Dir string
	// Full selects the full version (the sizes) instead of the CI version.
	Full bool
	// Progress receives a line per event (kills, restarts, progress); nil: none.
	Progress io.Writer
	// ConsumerArgs are extra flags for every consumer process (relconsumer's flags,
	// e.g. "-persist-interval", "1s"), for experiments; they come after the scenario's.
	ConsumerArgs []string
}

// Result is what a scenario measured.
type Result struct {
	Scenario   string // "A" … "F"
	Title      string
	Messages   int
	Lost       int // ids never recorded with status ok
	Duplicates int // extra ok records, the poison message's excluded
	Seconds    float64
	Notes      []string
	Targets    []Target
	Dir        string
}

// DuplicatePercent returns Duplicates as a percentage of Messages.
func (r Result) DuplicatePercent() float64 {
	if r.Messages == 0 {
		return 0
	}
	return 100 * float64(r.Duplicates) / float64(r.Messages)
}

// Target is one of the targets for a scenario, checked.
type Target struct {
	Name   string
	Met    bool
	Detail string // the measured figures
}

// scenario is one of A–F.
type scenario struct {
	letter, title string
	run           func(ctx context.Context, e *env) error
}

func scenarios() []scenario {
	return []scenario{
		{"A", "kill -9 churn", runA},
		{"B", "graceful churn", runB},
		{"C", "broker restart", runC},
		{"D", "slow listener", runD},
		{"E", "poison message", runE},
		{"F", "network faults", runF},
		{"G", "one master of two away", runG},
		{"H", "name server down", runH},
	}
}

// Scenarios returns the scenario letters, in order.
func Scenarios() []string {
	var out []string
	for _, s := range scenarios() {
		out = append(out, s.letter)
	}
	return out
}

// Run runs one scenario. The error reports a scenario that could not run (a process
// that did not start, a run that never completed); targets not met are in the Result.
func Run(ctx context.Context, cfg Config, letter string) (Result, error) {
	var sc *scenario
	for _, s := range scenarios() {
		if strings.EqualFold(s.letter, letter) {
			sc = &s
		}
	}
	if sc == nil {
		return Result{}, fmt.Errorf("reliability: unknown scenario %q (want one of %s)", letter, strings.Join(Scenarios(), ", "))
	}
	dir := filepath.Join(cfg.Dir, sc.letter)
	if err := os.RemoveAll(dir); err != nil { // record files are appended to
		return Result{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, err
	}
	e := &env{
		cfg:    cfg,
		dir:    dir,
		res:    &Result{Scenario: sc.letter, Title: sc.title, Dir: dir},
		group:  "rel" + sc.letter,
		topic:  "Rel" + sc.letter,
		byPID:  make(map[int]*consumerProc),
		coll:   newCollector(),
		letter: sc.letter,
	}
	e.progressf("scenario %s (%s), %s version, files in %s", sc.letter, sc.title, map[bool]string{true: "full", false: "CI"}[cfg.Full], dir)
	err := sc.run(ctx, e)
	if cerr := e.close(); err == nil {
		err = cerr
	}
	if err != nil {
		e.target("ran to completion", false, "%v", err)
	}
	return *e.res, err
}

// env is one scenario's run: its cluster, consumers and records.
type env struct {
	cfg          Config
	dir          string
	letter       string
	res          *Result
	cl           *cluster
	group, topic string
	consumerArgs []string // flags every consumer of the scenario gets
	consumers    []*consumerProc
	byPID        map[int]*consumerProc
	coll         *collector
	nextIdx      int
	began        time.Time // when consumption began
	// watch, when set, is called at every poll of waitDone, to observe the run.
	watch func(ctx context.Context) error
}

func (e *env) progressf(format string, args ...any) {
	if e.cfg.Progress == nil {
		return
	}
	at := ""
	if !e.began.IsZero() {
		at = fmt.Sprintf(" %6.1fs", time.Since(e.began).Seconds())
	}
	fmt.Fprintf(e.cfg.Progress, "[%s%s] %s\n", e.letter, at, fmt.Sprintf(format, args...))
}

func (e *env) notef(format string, args ...any) {
	e.res.Notes = append(e.res.Notes, fmt.Sprintf(format, args...))
}

func (e *env) target(name string, met bool, format string, args ...any) {
	e.res.Targets = append(e.res.Targets, Target{Name: name, Met: met, Detail: fmt.Sprintf(format, args...)})
}

// close ends every process of the scenario.
func (e *env) close() error {
	var errs []error
	for _, cp := range e.consumers {
		if cp.running() {
			errs = append(errs, cp.kill())
		}
	}
	if e.cl != nil {
		errs = append(errs, e.cl.close())
	}
	return errors.Join(errs...)
}

// startCluster starts the fake cluster with the scenario's topic.
func (e *env) startCluster(brokers, queues int, delayScale float64) error {
	cl, err := startCluster(e.dir, e.cfg.Bins.FakeBroker, clusterSpec{
		brokers: brokers, topics: map[string]int{e.topic: queues}, delayScale: delayScale})
	if err != nil {
		return err
	}
	e.cl = cl
	return nil
}

// startBusyGroup starts the fake cluster (2 brokers × 4 queues of the scenario's topic),
// stores messages, and starts consumers whose listener takes delay per message: the
// opening of the churn and restart scenarios. It returns the messages' ids.
func (e *env) startBusyGroup(ctx context.Context, messages int, delay time.Duration, consumers int) ([]string, error) {
	return e.startGroup(ctx, 4, messages, consumers, "-delay", delay.String())
}

// startGroup starts the fake cluster (2 brokers × queues of the scenario's topic),
// stores messages, and starts consumers with the consumer flags args. It returns the
// messages' ids.
func (e *env) startGroup(ctx context.Context, queues, messages, consumers int, args ...string) ([]string, error) {
	if err := e.startCluster(2, queues, 0); err != nil {
		return nil, err
	}
	ids, err := e.produce(ctx, messages)
	if err != nil {
		return nil, err
	}
	e.consumerArgs = args
	return ids, e.startConsumers(consumers)
}

// startConsumers starts n consumers with the scenario's consumer flags; the scenario's
// clock starts now.
func (e *env) startConsumers(n int) error {
	e.began = time.Now()
	for range n {
		if _, err := e.startConsumer(); err != nil {
			return err
		}
	}
	return nil
}

// produce stores n messages with unique ids (their bodies) and returns the ids.
func (e *env) produce(ctx context.Context, n int) ([]string, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%07d", e.topic, e.res.Messages+i)
	}
	if err := e.cl.Produce(ctx, e.topic, ids); err != nil {
		return nil, err
	}
	e.res.Messages += n
	return ids, nil
}

// committed reports whether the group's committed offset is at the end of every queue
// of the topic, and describes the first queue that is not.
func (e *env) committed(ctx context.Context) (bool, string, error) {
	offs, err := e.cl.offsetsByQueue(ctx, e.group, e.topic)
	if err != nil {
		return false, "", err
	}
	for k, o := range offs {
		if o.Committed != o.Max {
			return false, fmt.Sprintf("%s committed %d of %d", k, o.Committed, o.Max), nil
		}
	}
	return true, "", nil
}

// waitDone waits until want ids are recorded ok, every committed offset is at its
// queue's end, and extra (when not nil) holds; it checks every poll.
func (e *env) waitDone(ctx context.Context, want int, extra func() (bool, error)) error {
	timeout := 3 * time.Minute
	if e.cfg.Full {
		timeout = 30 * time.Minute
	}
	deadline := time.Now().Add(timeout)
	lastReport := time.Now()
	why := ""
	for {
		if err := e.coll.refresh(); err != nil {
			return err
		}
		if e.watch != nil {
			if err := e.watch(ctx); err != nil {
				return err
			}
		}
		done := false
		if e.coll.okIDs >= want {
			ok, what, err := e.committed(ctx)
			if err != nil {
				return err
			}
			done, why = ok, what
			if done && extra != nil {
				if done, err = extra(); err != nil {
					return err
				}
				if !done {
					why = "the scenario's own condition"
				}
			}
		} else {
			why = fmt.Sprintf("%d of %d ids recorded", e.coll.okIDs, want)
		}
		if done {
			return nil
		}
		if time.Since(lastReport) > 5*time.Second {
			e.progressf("waiting: %s", why)
			lastReport = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reliability: scenario %s not complete after %v: %s", e.letter, timeout, why)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitRecorded waits until at least n ids are recorded ok.
func (e *env) waitRecorded(ctx context.Context, n int) error {
	for {
		if err := e.coll.refresh(); err != nil {
			return err
		}
		if e.coll.okIDs >= n {
			return nil
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// finish stops the consumers, reads the last records, and counts lost and duplicated
// ids (the poison id, when not empty, is left out of both).
func (e *env) finish(ids []string, poison string) error {
	e.res.Seconds = time.Since(e.began).Seconds()
	if err := e.stopAll(); err != nil {
		return err
	}
	if err := e.coll.refresh(); err != nil {
		return err
	}
	var lost []string
	for _, id := range ids {
		if id != poison && len(e.coll.okRecords(id)) == 0 {
			lost = append(lost, id)
		}
	}
	e.res.Lost = len(lost)
	if len(lost) > 0 {
		e.notef("lost ids (first ones): %v", lost[:min(len(lost), 10)])
	}
	e.res.Duplicates = e.coll.duplicateCount(poison)
	e.target("0 lost", e.res.Lost == 0, "%d lost of %d", e.res.Lost, len(ids))
	return e.checkRegressions(context.Background())
}

// checkRegressions checks that no offset write of the group moved a stored offset back
// on brokers that may process offsets out of order (offsetReorder), as a real 4.9.8
// logs "[NOTIFYME]update consumer offset less than store" for each.
func (e *env) checkRegressions(ctx context.Context) error {
	regs, err := e.cl.Regressions(ctx, e.group)
	if err != nil {
		return err
	}
	total := 0
	var recent []string
	for broker, r := range regs {
		total += r.Count
		for _, x := range r.Recent[max(0, len(r.Recent)-3):] {
			recent = append(recent, fmt.Sprintf("%s/%d %d < %d (pull %v)", broker, x.QueueID, x.Request, x.Stored, x.ByPull))
		}
	}
	e.target("0 offsets moved back", total == 0, "%d offset writes moved a stored offset back (brokers processing offsets up to %v out of order)%s",
		total, offsetReorder, map[bool]string{true: "", false: fmt.Sprintf("; the last ones: %v", recent)}[total == 0])
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
