package reliability

import (
	"context"
	"fmt"
	"time"
)

// masterAwayParams size scenario G.
type masterAwayParams struct {
	messages  int
	consumers int
	queues    int // per broker
	delay     time.Duration
	firstAt   time.Duration // consumption before the outage
	down      time.Duration
	poll      time.Duration // the consumers' route poll (WithPollNameServerInterval)
}

func masterAwayParamsFor(full bool) masterAwayParams {
	if full { // the real-cluster check of issue 15: 16 queues, 3 consumers, 50 ms, 20 s down
		return masterAwayParams{messages: 100000, consumers: 3, queues: 8, delay: 50 * time.Millisecond,
			firstAt: 10 * time.Second, down: 20 * time.Second, poll: 30 * time.Second}
	}
	// A shorter route poll, so the consumers see the broker leave the routes (and drop
	// its queues) within the shorter outage, as the full version's 30 s poll does in 20 s
	// only some of the time.
	return masterAwayParams{messages: 24000, consumers: 3, queues: 8, delay: 50 * time.Millisecond,
		firstAt: 3 * time.Second, down: 8 * time.Second, poll: 2 * time.Second}
}

// masterAwayResume is the target for G: a broker's queues consumed again within
// 2 s of its return.
const masterAwayResume = 2 * time.Second

// runG: one master of two is stopped (it leaves the routes) for a while and started
// again with its data. The consumers keep consuming what they cached of it, cannot
// write those offsets, drop its queues when their route poll loses it, and must neither
// consume them again when it is back (the offsets are kept and written then) nor wait
// for the next route poll to resume (a route that lost a broker is polled every second).
func runG(ctx context.Context, e *env) error {
	p := masterAwayParamsFor(e.cfg.Full)
	ids, err := e.startGroup(ctx, p.queues, p.messages, p.consumers, "-delay", p.delay.String(), "-poll-interval", p.poll.String())
	if err != nil {
		return err
	}
	if err := sleepCtx(ctx, p.firstAt); err != nil {
		return err
	}
	away := e.cl.brokers[1]
	downAt := time.Now()
	if err := e.cl.Broker(ctx, away, "stop"); err != nil {
		return err
	}
	e.progressf("%s: stopped", away)
	if err := sleepCtx(ctx, p.down); err != nil {
		return err
	}
	if err := e.cl.Broker(ctx, away, "start"); err != nil {
		return err
	}
	upAt := time.Now()
	e.progressf("%s: started again", away)
	if err := e.waitDone(ctx, len(ids), nil); err != nil {
		return err
	}
	if err := e.finish(ids, ""); err != nil {
		return err
	}
	e.notef("%d consumers over 2 brokers × %d queues, listener %v, route poll %v; %s down %v",
		p.consumers, p.queues, p.delay, p.poll, away, p.down)
	// At most the listener calls running when it stopped may be consumed twice: every
	// consumer's workers (20 each).
	inFlight := p.consumers * 20
	e.target(fmt.Sprintf("duplicates ≤ the calls in flight at the stop (%d)", inFlight), e.res.Duplicates <= inFlight,
		"%d duplicates; by cause: %v", e.res.Duplicates, e.dupCauses(""))
	first, ok := e.coll.firstAfter(away, upAt)
	if !ok {
		e.target(fmt.Sprintf("%s resumed within %v", away, masterAwayResume), false, "no message of %s was consumed after it came back", away)
		return nil
	}
	took := first.At.Sub(upAt)
	detail := fmt.Sprintf("first message of %s consumed %v after it answered again", away, took.Round(time.Millisecond))
	drained := false
	if last, ok := e.coll.lastBefore(away, upAt); ok {
		drained = upAt.Sub(last.At) >= drainedBefore
		detail += fmt.Sprintf(" (its cached messages ran out %v after the stop, %v before it answered)",
			last.At.Sub(downAt).Round(time.Millisecond), upAt.Sub(last.At).Round(time.Millisecond))
	}
	if !drained {
		detail += "; not measurable: the consumers still had its messages cached when it came back"
	}
	e.target(fmt.Sprintf("%s resumed within %v", away, masterAwayResume), drained && took <= masterAwayResume, "%s", detail)
	return nil
}
