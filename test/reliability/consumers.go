package reliability

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// How a consumer process ended.
const (
	endNone   = ""        // still running, or ended at the scenario's end
	endKilled = "SIGKILL" // killed during the scenario
	endTermed = "SIGTERM" // stopped with Shutdown during the scenario
)

// consumerProc is one relconsumer process.
type consumerProc struct {
	*proc
	index   int
	records string
	logPath string
	stats   string
	pidNum  int

	ended    string    // endKilled or endTermed when churn ended it
	signalAt time.Time // when churn signalled it
	exitAt   time.Time // when it was gone
}

// startConsumer starts consumer process number e.nextIdx with the scenario's flags and
// extra ones, and waits until its Start returned.
func (e *env) startConsumer(extra ...string) (*consumerProc, error) {
	i := e.nextIdx
	e.nextIdx++
	name := fmt.Sprintf("consumer-%02d", i)
	cp := &consumerProc{
		index:   i,
		records: filepath.Join(e.dir, name+".records"),
		logPath: filepath.Join(e.dir, name+".log"),
		stats:   filepath.Join(e.dir, name+".stats"),
	}
	args := []string{"-namesrv", e.cl.nameSrv, "-group", e.group, "-topic", e.topic,
		"-records", cp.records, "-log", cp.logPath, "-stats", cp.stats, "-instance", name}
	args = append(args, e.consumerArgs...)
	args = append(args, extra...)
	args = append(args, e.cfg.ConsumerArgs...)
	p, err := startProc(e.dir, name, e.cfg.Bins.Consumer, args...)
	if err != nil {
		return nil, err
	}
	cp.proc = p
	cp.pidNum = p.pid()
	e.consumers = append(e.consumers, cp)
	e.byPID[cp.pidNum] = cp
	e.coll.add(cp.records)
	if _, err := p.waitForLine(30*time.Second, "start", func(l string) bool { return strings.HasPrefix(l, "started pid ") }); err != nil {
		return nil, err
	}
	e.progressf("started %s (pid %d)", name, cp.pidNum)
	return cp, nil
}

// killConsumer kills cp with SIGKILL and waits until it is gone.
func (e *env) killConsumer(cp *consumerProc) error {
	cp.ended, cp.signalAt = endKilled, time.Now()
	err := cp.kill()
	cp.exitAt = time.Now()
	e.progressf("killed %s (pid %d)", cp.name, cp.pidNum)
	return err
}

// termConsumer stops cp with SIGTERM (it calls Shutdown) and waits until it exited.
func (e *env) termConsumer(cp *consumerProc) error {
	cp.ended, cp.signalAt = endTermed, time.Now()
	err := cp.term(30 * time.Second)
	cp.exitAt = time.Now()
	e.progressf("stopped %s (pid %d) in %v", cp.name, cp.pidNum, cp.exitAt.Sub(cp.signalAt).Round(time.Millisecond))
	return err
}

// live returns the consumers still running, oldest first.
func (e *env) live() []*consumerProc {
	var out []*consumerProc
	for _, cp := range e.consumers {
		if cp.running() {
			out = append(out, cp)
		}
	}
	return out
}

// stopAll stops every running consumer with SIGTERM, in parallel, and reports the
// first failure (a Shutdown that failed, a process that did not exit).
func (e *env) stopAll() error {
	live := e.live()
	for _, cp := range live {
		_ = cp.signal(sigterm)
	}
	var first error
	for _, cp := range live {
		if err := cp.wait(30 * time.Second); err != nil && first == nil {
			first = fmt.Errorf("reliability: %s at the end: %w", cp.name, err)
		}
	}
	return first
}
