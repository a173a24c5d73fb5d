package reliability

import (
	"context"
	"fmt"
	"time"
)

// restartParams size scenario C.
type restartParams struct {
	messages  int
	consumers int
	delay     time.Duration
	firstAt   time.Duration // consumption time before the first outage
	down      time.Duration // how long a broker stays down
	gap       time.Duration // between the first broker's return and the second outage
}

func restartParamsFor(full bool) restartParams {
	if full {
		return restartParams{messages: 100000, consumers: 2, delay: 20 * time.Millisecond,
			firstAt: 10 * time.Second, down: 10 * time.Second, gap: 10 * time.Second}
	}
	return restartParams{messages: 30000, consumers: 2, delay: 20 * time.Millisecond,
		firstAt: 3 * time.Second, down: 6 * time.Second, gap: 3 * time.Second}
}

// drainedBefore is how long before a broker answers again its queues' last cached
// message must have been consumed for the resumption to be measurable from the record
// files: the first message of the broker recorded after that was pulled after it came
// back. Each outage lasts long enough for the consumers to run out of its messages.
const drainedBefore = time.Second

// resumeBound is the target: consumption of a broker's queues resumed within
// 1 s of the broker answering again.
const resumeBound = time.Second

// outage is one broker taken down and brought back.
type outage struct {
	broker, how  string // how: "stop" (a clean shutdown) or "kill" (no goodbye)
	downAt, upAt time.Time
}

// runC: broker-a is stopped (leaving the routes) and started again with its data;
// later broker-b is killed (connections reset, still routed) and started again.
func runC(ctx context.Context, e *env) error {
	p := restartParamsFor(e.cfg.Full)
	ids, err := e.startBusyGroup(ctx, p.messages, p.delay, p.consumers)
	if err != nil {
		return err
	}
	var outages []outage
	wait := p.firstAt
	for _, o := range []outage{{broker: e.cl.brokers[0], how: "stop"}, {broker: e.cl.brokers[1], how: "kill"}} {
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
		o.downAt = time.Now()
		if err := e.cl.Broker(ctx, o.broker, o.how); err != nil {
			return err
		}
		e.progressf("%s: %s", o.broker, o.how)
		if err := sleepCtx(ctx, p.down); err != nil {
			return err
		}
		if err := e.cl.Broker(ctx, o.broker, "start"); err != nil {
			return err
		}
		o.upAt = time.Now() // listening, with its data, when start returns
		e.progressf("%s: started again", o.broker)
		outages = append(outages, o)
		wait = p.gap
	}
	if err := e.waitDone(ctx, len(ids), nil); err != nil {
		return err
	}
	if err := e.finish(ids, ""); err != nil {
		return err
	}
	e.notef("%d consumers, listener %v, each broker down %v", p.consumers, p.delay, p.down)
	for _, o := range outages {
		first, ok := e.coll.firstAfter(o.broker, o.upAt)
		if !ok {
			e.target(fmt.Sprintf("%s (%s) resumed within %v", o.broker, o.how, resumeBound), false,
				"no message of %s was consumed after it came back", o.broker)
			continue
		}
		took := first.At.Sub(o.upAt)
		detail := fmt.Sprintf("first message of %s consumed %v after it answered again", o.broker, took.Round(time.Millisecond))
		drained := false
		if last, ok := e.coll.lastBefore(o.broker, o.upAt); ok {
			drained = o.upAt.Sub(last.At) >= drainedBefore
			detail += fmt.Sprintf(" (its cached messages ran out %v after the %s, %v before it answered)",
				last.At.Sub(o.downAt).Round(time.Millisecond), o.how, o.upAt.Sub(last.At).Round(time.Millisecond))
		}
		if !drained {
			detail += "; not measurable: the consumers still had its messages cached when it came back"
		}
		e.target(fmt.Sprintf("%s (%s) resumed within %v", o.broker, o.how, resumeBound), drained && took <= resumeBound, "%s", detail)
	}
	e.target("0 duplicates", e.res.Duplicates == 0, "%d duplicates; by cause: %v", e.res.Duplicates, e.dupCauses(""))
	return nil
}
