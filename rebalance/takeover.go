package rebalance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/message"
)

// settleEvery is how often, after the takeover grace, a gained queue's committed offset
// is read to see whether its previous owner still moves it. A consuming member commits
// within its commit interval (10 ms by default), so a quarter second shows it.
const settleEvery = 250 * time.Millisecond

// errUnread stands for a reading not taken: its broker did not answer for another queue.
var errUnread = errors.New("rebalance: offset not read: its broker did not answer this pass")

// takeover is a queue gained from another member and not started yet. It starts once
// the grace is over and the offset the group committed for it stopped moving (two
// readings settleEvery apart agree), or at the deadline.
type takeover struct {
	due      time.Time // when to look again
	deadline time.Time // start then whatever the offset does
	seen     bool      // offset holds a reading
	offset   int64     // the last committed offset read; -1: none stored
}

// dueNow returns the gained queues to create now. With a TakeoverGrace, a queue gained
// from another member waits that long first: the member that had it is releasing it at
// the same moment (the same notification woke both), and must persist its last offsets
// before this client reads them, or the messages it consumed last would be consumed
// again; and a member list that left a live member out is corrected meanwhile (the
// queue then leaves the pending set, as every queue no longer gained does). Then, with a
// TakeoverMaxWait, it waits for the committed offset to settle (see takeover). With
// noPrevOwner, nothing waits.
func (r *Rebalancer) dueNow(ctx context.Context, topic string, gained []message.Queue, noPrevOwner bool, now time.Time) []message.Queue {
	for q := range r.pending {
		if q.Topic == topic && !slices.Contains(gained, q) {
			delete(r.pending, q)
		}
	}
	if r.cfg.TakeoverGrace <= 0 || noPrevOwner {
		for _, q := range gained {
			delete(r.pending, q)
		}
		return gained
	}
	var ready []message.Queue
	for _, q := range gained {
		t, ok := r.pending[q]
		if !ok {
			t = &takeover{due: now.Add(r.cfg.TakeoverGrace), deadline: now.Add(r.cfg.TakeoverGrace + r.cfg.TakeoverMaxWait)}
			r.pending[q] = t
		}
		if !t.due.After(now) {
			ready = append(ready, q)
		}
	}
	due := r.settled(ctx, ready, now)
	var next time.Time
	for _, q := range gained {
		if t, ok := r.pending[q]; ok && (next.IsZero() || t.due.Before(next)) {
			next = t.due
		}
	}
	if !next.IsZero() {
		r.passAt(next)
	}
	return due
}

// settled reads the committed offsets of the pending queues qs whose grace is over, one
// goroutine per broker, and returns those to start now, forgetting them: the offset did
// not move since the last reading, or the deadline passed. The others look again
// settleEvery later.
func (r *Rebalancer) settled(ctx context.Context, qs []message.Queue, now time.Time) []message.Queue {
	if len(qs) == 0 {
		return nil
	}
	if r.cfg.TakeoverMaxWait <= 0 {
		for _, q := range qs {
			delete(r.pending, q)
		}
		return qs
	}
	type reading struct {
		off int64
		err error
	}
	readings := make(map[message.Queue]reading, len(qs))
	var mu sync.Mutex
	eachByBroker(qs, func(q message.Queue) bool {
		if r.pass.unanswered(q.BrokerName) {
			return false // its readings stay unknown: looked at again later
		}
		off, found, err := r.cfg.Broker.QueryConsumerOffset(ctx, r.cfg.Group, q)
		if !found {
			off = -1
		}
		mu.Lock()
		readings[q] = reading{off, err}
		mu.Unlock()
		if err != nil && ctx.Err() == nil {
			r.pass.setUnanswered(q.BrokerName) // one timeout per broker and pass, not per queue
			return false
		}
		return true
	})
	var start []message.Queue
	for _, q := range qs {
		t := r.pending[q]
		rd, read := readings[q]
		if !read {
			rd.err = errUnread
		}
		switch {
		case !now.Before(t.deadline):
			r.logf(logging.LevelWarn, "a gained queue's offset did not settle before its takeover deadline: starting it anyway (its previous owner may still consume it)", q, rd.err)
		case rd.err != nil:
			t.due = now.Add(settleEvery) // unknown: look again
			continue
		case !t.seen || rd.off != t.offset:
			if t.seen && logging.Enabled(r.log, logging.LevelDebug) {
				r.log.Log(logging.LevelDebug, "a gained queue's offset moved: its previous owner still consumes it; waiting",
					"group", r.cfg.Group, "queue", q.String(), "from", t.offset, "to", rd.off)
			}
			t.seen, t.offset, t.due = true, rd.off, now.Add(settleEvery)
			continue
		}
		delete(r.pending, q)
		start = append(start, q)
	}
	return start
}
