package reliability

import (
	"context"
	"fmt"
	"time"
)

// churnParams size scenarios A and B.
type churnParams struct {
	messages  int
	consumers int
	events    int
	every     time.Duration
	delay     time.Duration // listener work per message
}

func churnParamsFor(full bool) churnParams {
	if full { // the issue's: 200,000 messages, 3 consumers, 20 ms, every 8 s for about 60 s
		return churnParams{messages: 200000, consumers: 3, events: 7, every: 8 * time.Second, delay: 20 * time.Millisecond}
	}
	return churnParams{messages: ciChurnMessages, consumers: 3, events: 3, every: ciChurnEvery, delay: 20 * time.Millisecond}
}

// The CI version of A and B keeps the full version's number of churn events per message
// (7 per 200,000), so that the duplicate percentages of both compare: duplicates come per
// event, and the same bound on fewer messages per event would be a different target.
const (
	ciChurnMessages = 3 * 200000 / 7 // 85,714: three events at the full run's density
	ciChurnEvery    = 8 * time.Second
)

func runA(ctx context.Context, e *env) error { return runChurn(ctx, e, false) }

func runB(ctx context.Context, e *env) error { return runChurn(ctx, e, true) }

// runChurn: one consumer of the group is replaced every p.every, killed with SIGKILL
// (A) or stopped with SIGTERM (B); then the group runs to completion.
func runChurn(ctx context.Context, e *env, graceful bool) error {
	p := churnParamsFor(e.cfg.Full)
	ids, err := e.startBusyGroup(ctx, p.messages, p.delay, p.consumers)
	if err != nil {
		return err
	}
	var exits []*exitStat
	var ended []*consumerProc
	for range p.events {
		if err := sleepCtx(ctx, p.every); err != nil {
			return err
		}
		live := e.live()
		if len(live) == 0 {
			return fmt.Errorf("reliability: no consumer left to replace: every one exited on its own")
		}
		victim := live[0] // the oldest
		if graceful {
			err = e.termConsumer(victim)
		} else {
			err = e.killConsumer(victim)
		}
		if err != nil {
			return err
		}
		st, err := e.snapshotExit(ctx, victim)
		if err != nil {
			return err
		}
		exits, ended = append(exits, st), append(ended, victim)
		if _, err := e.startConsumer(); err != nil {
			return err
		}
	}
	if err := e.waitDone(ctx, len(ids), nil); err != nil {
		return err
	}
	if err := e.finish(ids, ""); err != nil {
		return err
	}
	for i, st := range exits {
		if err := e.analyse(st, ended[i]); err != nil {
			return err
		}
		e.progressf("%s", st)
	}
	summary, predicted := exitSummary(exits)
	e.notef("%d consumers, listener %v, one replaced every %v", p.consumers, p.delay, p.every)
	e.notef("%s", summary)
	e.notef("duplicates by cause: %v (the exits predicted %d)", e.dupCauses(""), predicted)
	bound := 0.10
	if graceful {
		bound = 0.01
	}
	e.target(fmt.Sprintf("duplicates ≤ %.2f %%", bound), e.res.DuplicatePercent() <= bound,
		"%d duplicates of %d messages = %.3f %%", e.res.Duplicates, e.res.Messages, e.res.DuplicatePercent())
	return nil
}
