package rebalance

import (
	"context"
	"sync"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/pull"
)

// ResetOffsets applies an admin's offset reset (RESET_CONSUMER_CLIENT_OFFSET) to topic:
// the topic's queues are dropped (their listener calls in flight waited for by
// BeforeRemove), each queue in offsets gets its new offset stored, frozen and persisted,
// and a pass creates the queues again from there. Java does the same with a 10 s sleep
// in place of the wait.
func (r *Rebalancer) ResetOffsets(ctx context.Context, topic string, offsets map[message.Queue]int64) {
	r.passMu.Lock()
	var reqs []*pull.Request
	r.mu.RLock()
	for q, req := range r.table {
		if q.Topic == topic {
			reqs = append(reqs, req)
		}
	}
	r.mu.RUnlock()
	var wg sync.WaitGroup
	for _, req := range reqs {
		req.PQ.SetDropped(true)
		if r.cfg.BeforeRemove != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = r.cfg.BeforeRemove(ctx, req.Queue, req.PQ) // the reset goes ahead regardless
			}()
		}
	}
	wg.Wait()
	for q, off := range offsets {
		if q.Topic != topic {
			continue
		}
		r.cfg.Offsets.UpdateAndFreeze(q, off)
		if err := r.cfg.Offsets.Persist(ctx, q); err != nil {
			r.logf(logging.LevelWarn, "persisting a reset offset failed", q, err)
		}
	}
	r.mu.Lock()
	for _, req := range reqs {
		if r.table[req.Queue] == req {
			delete(r.table, req.Queue)
		}
	}
	r.mu.Unlock()
	for q := range offsets {
		r.cfg.Offsets.Remove(q)
	}
	for _, req := range reqs {
		r.cfg.Offsets.Remove(req.Queue)
	}
	r.passMu.Unlock()
	r.Trigger()
}

// Forget drops a queue without persisting its offset, and creates it again at the next
// pass, from the offset stored on the broker. Orderly consumption calls it when this
// client regains a queue's lock and finds that another client consumed it further
// meanwhile: this client's cached messages and in-memory offset are stale, and
// persisting them would move the group's offset back.
func (r *Rebalancer) Forget(q message.Queue) {
	r.mu.Lock()
	req, ok := r.table[q]
	if ok {
		req.PQ.SetDropped(true)
		delete(r.table, q)
	}
	r.mu.Unlock()
	if ok {
		r.cfg.Offsets.Remove(q)
		r.logf(logging.LevelInfo, "queue forgotten to start again from the broker's offset", q, nil)
		r.Trigger()
	}
}
