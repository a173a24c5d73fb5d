package reliability

import (
	"context"
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/test/fakebroker/control"
)

// faultParams size scenario F.
type faultParams struct {
	warm       int // messages consumed before the baseline sample
	messages   int // messages consumed through the faults
	consumers  int
	delay      time.Duration
	closeEvery time.Duration
	closes     int
	busyFor    time.Duration // pulls answered SYSTEM_BUSY
	flowFor    time.Duration // pulls answered FLOW_CONTROL
	pauseFor   time.Duration // a broker that stops answering
	idle       time.Duration // idle time before a baseline or end sample
}

func faultParamsFor(full bool) faultParams {
	if full {
		return faultParams{warm: 5000, messages: 100000, consumers: 2, delay: 20 * time.Millisecond,
			closeEvery: 3 * time.Second, closes: 5, busyFor: 5 * time.Second, flowFor: 5 * time.Second,
			pauseFor: 20 * time.Second, idle: 3 * time.Second}
	}
	return faultParams{warm: 1000, messages: 15000, consumers: 2, delay: 40 * time.Millisecond,
		closeEvery: 1500 * time.Millisecond, closes: 3, busyFor: 2 * time.Second, flowFor: 2 * time.Second,
		pauseFor: 6 * time.Second, idle: 2 * time.Second}
}

// Growth allowed between the idle sample before the faults and the idle sample after
// them: the same connections and queues are open, so goroutines should be equal; the
// heap may differ by what the GC keeps around.
const (
	goroutineSlack = 2
	heapSlack      = 2 << 20
)

// runF: connections of broker-a closed every few seconds, pulls failed with
// SYSTEM_BUSY and then FLOW_CONTROL, broker-b paused. Nothing may be lost, and each
// consumer, idle after the faults, must have the goroutines and heap it had idle before.
func runF(ctx context.Context, e *env) error {
	p := faultParamsFor(e.cfg.Full)
	if err := e.startCluster(2, 4, 0); err != nil {
		return err
	}
	a, b := e.cl.brokers[0], e.cl.brokers[1]
	e.consumerArgs = []string{"-delay", p.delay.String(), "-stats-every", "500ms"}
	warm, err := e.produce(ctx, p.warm)
	if err != nil {
		return err
	}
	if err := e.startConsumers(p.consumers); err != nil {
		return err
	}
	if err := e.waitDone(ctx, len(warm), nil); err != nil {
		return err
	}
	if err := sleepCtx(ctx, p.idle); err != nil {
		return err
	}
	baseAt := time.Now()
	ids, err := e.produce(ctx, p.messages)
	if err != nil {
		return err
	}
	ids = append(warm, ids...)

	faultsFrom := time.Now()
	for i := range p.closes {
		if err := sleepCtx(ctx, p.closeEvery); err != nil {
			return err
		}
		if err := e.cl.Broker(ctx, a, "close-connections"); err != nil {
			return err
		}
		e.progressf("%s: connections closed (%d of %d)", a, i+1, p.closes)
	}
	for _, f := range []struct {
		code int32
		d    time.Duration
	}{{protocol.ResponseSystemBusy, p.busyFor}, {protocol.ResponseFlowControl, p.flowFor}} {
		for _, br := range e.cl.brokers {
			if err := e.cl.Inject(ctx, br, control.FaultSpec{Code: protocol.RequestPullMessage, Fail: f.code, For: f.d.String()}); err != nil {
				return err
			}
		}
		e.progressf("pulls answered %d for %v", f.code, f.d)
		if err := sleepCtx(ctx, f.d); err != nil {
			return err
		}
	}
	if err := e.cl.Broker(ctx, b, "pause"); err != nil {
		return err
	}
	e.progressf("%s paused", b)
	if err := sleepCtx(ctx, p.pauseFor); err != nil {
		return err
	}
	if err := e.cl.Broker(ctx, b, "resume"); err != nil {
		return err
	}
	e.progressf("%s resumed", b)
	faultsTo := time.Now()

	if err := e.waitDone(ctx, len(ids), nil); err != nil {
		return err
	}
	if err := sleepCtx(ctx, p.idle); err != nil {
		return err
	}
	endAt := time.Now()
	if err := e.finish(ids, ""); err != nil {
		return err
	}
	e.notef("%d consumers, listener %v; %s's connections closed %d times every %v, pulls SYSTEM_BUSY %v then FLOW_CONTROL %v, %s paused %v",
		p.consumers, p.delay, a, p.closes, p.closeEvery, p.busyFor, p.flowFor, b, p.pauseFor)
	e.notef("duplicates by cause: %v", e.dupCauses(""))
	for _, cp := range e.consumers {
		samples, err := readSamples(cp.stats)
		if err != nil {
			return err
		}
		base, ok1 := lastSampleBefore(samples, baseAt)
		end, ok2 := lastSampleBefore(samples, endAt)
		if !ok1 || !ok2 {
			e.target(cp.name+": no goroutine or heap growth", false, "no stats sample before the faults or after them")
			continue
		}
		pg, ph := peak(samples, faultsFrom, faultsTo)
		met := end.goroutines <= base.goroutines+goroutineSlack && end.heap <= base.heap+heapSlack
		e.target(cp.name+": no goroutine or heap growth", met,
			"idle before the faults: %d goroutines, %s heap; idle after: %d goroutines, %s heap (during: up to %d, %s)",
			base.goroutines, mib(base.heap), end.goroutines, mib(end.heap), pg, mib(ph))
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
