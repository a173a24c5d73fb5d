package reliability

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// slowPhase is one run of scenario D: one consumer, 8 queues, a slow listener.
type slowPhase struct {
	suffix   string // of the topic and group
	delay    time.Duration
	perQueue int
}

func slowPhasesFor(full bool) []slowPhase {
	if full { // the issue's: 8 queues × 2,000 messages, 20 ms and 200 ms
		return []slowPhase{{"20ms", 20 * time.Millisecond, 2000}, {"200ms", 200 * time.Millisecond, 2000}}
	}
	return []slowPhase{{"20ms", 20 * time.Millisecond, 1000}, {"200ms", 200 * time.Millisecond, 50}}
}

// runD: one consumer of 8 queues with a slow listener. No queue may be dropped and
// created again (rocketmq-client-go's slow listeners make queues expire), nothing may
// be consumed twice.
func runD(ctx context.Context, e *env) error {
	phases := slowPhasesFor(e.cfg.Full)
	topics := map[string]int{}
	base, baseGroup := e.topic, e.group
	for _, ph := range phases {
		topics[base+ph.suffix] = 4
	}
	cl, err := startCluster(e.dir, e.cfg.Bins.FakeBroker, clusterSpec{brokers: 2, topics: topics})
	if err != nil {
		return err
	}
	e.cl = cl
	e.began = time.Now()
	var all []string
	for _, ph := range phases {
		e.topic, e.group = base+ph.suffix, baseGroup+ph.suffix
		ids, err := e.produce(ctx, 8*ph.perQueue)
		if err != nil {
			return err
		}
		all = append(all, ids...)
		e.consumerArgs = []string{"-delay", ph.delay.String()}
		began := time.Now()
		cp, err := e.startConsumer()
		if err != nil {
			return err
		}
		if err := e.waitDone(ctx, len(all), nil); err != nil {
			return err
		}
		took := time.Since(began)
		if err := e.termConsumer(cp); err != nil {
			return err
		}
		added, dropped, err := queueEvents(cp.logPath, e.topic)
		if err != nil {
			return err
		}
		e.notef("listener %v: 8 queues × %d messages in %.1fs", ph.delay, ph.perQueue, took.Seconds())
		e.target(fmt.Sprintf("listener %v: no queue dropped and re-created", ph.delay), len(dropped) == 0 && added == 8,
			"%d queues added (8 expected), %d dropped before shutdown %v", added, len(dropped), dropped)
	}
	if err := e.finish(all, ""); err != nil {
		return err
	}
	e.target("0 duplicates", e.res.Duplicates == 0, "%d duplicates; by cause: %v", e.res.Duplicates, e.dupCauses(""))
	return nil
}

// queueEvents counts, in a consumer's log, the queues of topic added and the drops
// other than the shutdown's (their log lines).
func queueEvents(logPath, topic string) (added int, dropped []string, err error) {
	f, err := os.Open(logPath)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ofTopic := fmt.Sprintf(`queue="%s@`, topic)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, ofTopic) {
			continue
		}
		switch {
		case strings.Contains(line, `"queue added"`):
			added++
		case strings.Contains(line, `"queue dropped: consumer shutting down"`):
		case strings.Contains(line, `"queue dropped`), strings.Contains(line, `"queue forgotten`):
			dropped = append(dropped, line)
		}
	}
	return added, dropped, sc.Err()
}
