package fakebroker

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rmqpush/rmqpush/remoting"
)

// Lag makes a broker process requests of one code the way a real broker's thread pools
// do: each one is handled, and answered, a time in [Min, Max] (uniformly random) after
// it arrived, without holding up the requests that arrived after it. With Min = Max it
// is a fixed service time; with Max > Min two requests may be processed in the other
// order than they arrived. 4.9.8 handles PULL_MESSAGE (whose commit-offset flag stores
// the consumer offset) and UPDATE_CONSUMER_OFFSET on two different thread pools, so an
// offset written after another can be stored before it; WithOutOfOrderOffsets gives a
// fake broker the same freedom, and OffsetRegressions counts what it did.
type Lag struct {
	Code     int32         // the request code; AnyCode: every code without a Lag of its own
	Min, Max time.Duration // bounds of the delay; Max ≥ Min ≥ 0
}

func (l Lag) validate() error {
	switch {
	case l.Min < 0 || l.Max < l.Min:
		return fmt.Errorf("fakebroker: Lag of code %d: want 0 ≤ Min ≤ Max, got Min %v, Max %v", l.Code, l.Min, l.Max)
	case l.Code < AnyCode:
		return fmt.Errorf("fakebroker: Lag: code %d is not a request code (or AnyCode)", l.Code)
	}
	return nil
}

// delay draws one request's delay.
func (l Lag) delay() time.Duration {
	if l.Max == l.Min {
		return l.Min
	}
	return l.Min + rand.N(l.Max-l.Min+1)
}

// WithPullServiceTime makes every broker answer each PULL_MESSAGE d after it arrived
// (the pull is processed then), as if its pull thread pool took that long: a real broker
// is not free, and a client that waits between a pull's answer and its next pull loses
// throughput against it where it would not against an instant fake.
func WithPullServiceTime(d time.Duration) Opt {
	return WithLag(Lag{Code: RequestPullMessage, Min: d, Max: d})
}

// WithOutOfOrderOffsets makes every broker process each PULL_MESSAGE and each
// UPDATE_CONSUMER_OFFSET a random time of up to maxLag after it arrived, so that a
// consumer offset carried by one can be stored after a newer one carried by the other,
// moving the stored offset back, as 4.9.8's separate thread pools can. Broker's
// OffsetRegressions counts such writes.
func WithOutOfOrderOffsets(maxLag time.Duration) Opt {
	return WithLag(Lag{Code: RequestPullMessage, Max: maxLag}, Lag{Code: RequestUpdateConsumerOffset, Max: maxLag})
}

// WithLag sets the processing lags of every broker (see Lag); a later Lag for the same
// code replaces an earlier one. Broker.SetLag changes them at run time.
func WithLag(lags ...Lag) Opt {
	return func(c *config) {
		for _, l := range lags {
			if err := l.validate(); err != nil {
				c.errs = append(c.errs, err)
				continue
			}
			if c.lags == nil {
				c.lags = map[int32]Lag{}
			}
			c.lags[l.Code] = l
		}
	}
}

// SetLag replaces the broker's processing lags with lags (none: requests are processed
// as they arrive). Requests already waiting keep their delay.
func (b *Broker) SetLag(lags ...Lag) error {
	m := map[int32]Lag{}
	for _, l := range lags {
		if err := l.validate(); err != nil {
			return err
		}
		m[l.Code] = l
	}
	b.ep.setLags(m)
	return nil
}

// lagOf returns the delay to process a request of code with, 0 for none. ep.mu is held.
func (ep *endpoint) lagOf(code int32) time.Duration {
	if len(ep.lags) == 0 {
		return 0
	}
	l, ok := ep.lags[code]
	if !ok {
		if l, ok = ep.lags[AnyCode]; !ok {
			return 0
		}
	}
	return l.delay()
}

func (ep *endpoint) setLags(m map[int32]Lag) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if len(m) == 0 {
		m = nil
	}
	ep.lags = m
}

// processLater processes req d from now on the scheduler and answers it, unless the
// endpoint stopped (or restarted) meanwhile.
func (ep *endpoint) processLater(sc conn, req *remoting.Command, h handler, d time.Duration) {
	gen := ep.generation()
	ep.sched.after(d, func() {
		if ep.generation() != gen || !ep.isRunning() {
			return // the connection is gone
		}
		if resp := ep.process(sc, req, h); resp != nil && !req.IsOneway() {
			ep.respond(sc, resp)
		}
	})
}

// OffsetRegression is a consumer-offset write that moved a stored offset back: what
// 4.9.8 logs as "[NOTIFYME]update consumer offset less than store". An offset reset by
// an administrator is not one.
type OffsetRegression struct {
	Group   string `json:"group"`
	Topic   string `json:"topic"`
	QueueID int    `json:"queueId"`
	Request int64  `json:"request"` // the offset written
	Stored  int64  `json:"stored"`  // the offset it replaced
	ByPull  bool   `json:"byPull"`  // carried by a pull's commit-offset flag, not UPDATE_CONSUMER_OFFSET
}

// maxRegressionsKept bounds the regressions a broker remembers (it counts them all).
const maxRegressionsKept = 1024

// OffsetRegressions returns how many consumer-offset writes of group (every group when
// group is "") moved a stored offset back, and the most recent of them (at most 1,024
// are kept), oldest first.
func (b *Broker) OffsetRegressions(group string) (int, []OffsetRegression) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if group == "" {
		return b.regressionTotal, append([]OffsetRegression(nil), b.regressions...)
	}
	var recent []OffsetRegression
	for _, r := range b.regressions {
		if r.Group == group {
			recent = append(recent, r)
		}
	}
	return b.regressionCount[group], recent
}

// noteRegression records a write that moved an offset back. b.mu is held.
func (b *Broker) noteRegression(r OffsetRegression) {
	b.regressionTotal++
	if b.regressionCount == nil {
		b.regressionCount = map[string]int{}
	}
	if _, ok := b.regressionCount[r.Group]; ok || len(b.regressionCount) < maxGroups {
		b.regressionCount[r.Group]++
	}
	if len(b.regressions) == maxRegressionsKept {
		copy(b.regressions, b.regressions[1:])
		b.regressions = b.regressions[:maxRegressionsKept-1]
	}
	b.regressions = append(b.regressions, r)
}
