package rebalance

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
)

// Every way a queue leaves this client goes through release or restart, so the rules
// are written once:
//
//   - release (the queue is no longer assigned, expired, unsubscribed, shutdown): mark
//     it dropped, let BeforeRemove wait for the listener calls in flight (their results
//     still count), persist the offset, forget it, AfterRemove (orderly: unlock), and
//     only then discard the queue's results, so a call that outlived the wait cannot
//     write a stale offset;
//   - restart (the broker corrected an illegal offset, an admin reset it): mark it
//     dropped and discard its results at once (the cached messages' offsets mean
//     nothing now), record where it restarts, store the new offset frozen and persist
//     it, then let BeforeRemove wait (orderly: no call on the old queue may overlap one
//     on the new), and create the queue again at that offset.
//
// When BeforeRemove declines (an orderly call still running), the queue stays in the
// table, dropped, and a later pass releases it. A restart's new offset is recorded and
// frozen before BeforeRemove is asked, so that release persists the new offset, not the
// old one, and the queue is created again at the new offset.

// maxParallelDrops bounds the goroutines one drop uses.
const maxParallelDrops = 16

// illegalOffset is a queue whose offset the broker rejected.
type illegalOffset struct {
	r    *pull.Request
	next int64
}

// OffsetIllegal is the pull service's OnOffsetIllegal: the broker rejected r's offset
// and r.PQ is dropped. The next pass restarts the queue at next. It does not block.
func (r *Rebalancer) OffsetIllegal(req *pull.Request, next int64) {
	req.PQ.Discard()
	r.illegalMu.Lock()
	r.illegal = append(r.illegal, illegalOffset{r: req, next: next})
	r.illegalMu.Unlock()
	r.Trigger()
}

// illegalPending reports whether an illegal-offset report about req waits for the next
// pass.
func (r *Rebalancer) illegalPending(req *pull.Request) bool {
	r.illegalMu.Lock()
	defer r.illegalMu.Unlock()
	return slices.ContainsFunc(r.illegal, func(it illegalOffset) bool { return it.r == req })
}

// applyIllegalOffsets restarts the queues whose offset the broker rejected, as Java 5
// does (update-and-freeze, persist, recreate), ignoring reports about requests that are
// no longer current.
func (r *Rebalancer) applyIllegalOffsets(ctx context.Context) {
	r.illegalMu.Lock()
	items := r.illegal
	r.illegal = nil
	r.illegalMu.Unlock()
	var reqs []*pull.Request
	at := map[message.Queue]int64{}
	r.mu.RLock()
	for _, it := range items {
		if r.table[it.r.Queue] == it.r {
			reqs = append(reqs, it.r)
			at[it.r.Queue] = it.next
		}
	}
	r.mu.RUnlock()
	r.restart(ctx, reqs, at, "the broker corrected its offset")
}

// ResetOffsets applies an admin's offset reset (RESET_CONSUMER_CLIENT_OFFSET) to the
// queues of topic this client consumes and offsets names, as Java's resetOffset does:
// each restarts at its new offset, which is persisted first. Queues of other clients
// are left to them.
func (r *Rebalancer) ResetOffsets(ctx context.Context, topic string, offsets map[message.Queue]int64) {
	r.passMu.Lock()
	var reqs []*pull.Request
	r.mu.RLock()
	for q, req := range r.table {
		if _, ok := offsets[q]; ok && q.Topic == topic {
			reqs = append(reqs, req)
		}
	}
	r.mu.RUnlock()
	r.restart(ctx, reqs, offsets, "an admin reset its offset")
	r.passMu.Unlock()
	r.Trigger()
}

// Forget drops pq, q's process queue, without persisting its offset, and creates q
// again from the offset stored on the broker. Orderly consumption calls it when this
// client regains a queue's lock and finds that another client consumed it further
// meanwhile: this client's cached messages and in-memory offset are stale, and
// persisting them would move the group's offset back. The queue stays in the table,
// dropped, for the next pass to release it as any dropped queue (BeforeRemove waits for
// the listener call in progress, so no call on the new queue overlaps it) and create
// it again. It does nothing if pq is no longer q's (a stale regain).
func (r *Rebalancer) Forget(q message.Queue, pq *processqueue.ProcessQueue) {
	r.mu.Lock()
	req, ok := r.table[q]
	ok = ok && req.PQ == pq
	if ok {
		pq.SetDropped(true)
		pq.Discard() // the call in progress must not store its offset
	}
	r.mu.Unlock()
	if ok {
		r.cfg.Offsets.Remove(q)
		r.logf(logging.LevelInfo, "queue forgotten to start again from the broker's offset", q, nil)
		r.Trigger()
	}
}

// DropAll releases every queue (shutdown).
func (r *Rebalancer) DropAll(ctx context.Context) {
	r.passMu.Lock()
	defer r.passMu.Unlock()
	r.dropPops(nil)
	r.mu.RLock()
	all := make([]*pull.Request, 0, len(r.table))
	for _, req := range r.table {
		all = append(all, req)
	}
	r.mu.RUnlock()
	r.release(ctx, all, "consumer shutting down")
}

// release drops reqs' queues for good; see the top of this file. It returns how many
// it removed.
func (r *Rebalancer) release(ctx context.Context, reqs []*pull.Request, why string) int {
	return r.dropEach(ctx, reqs, why, true, nil, func(ctx context.Context, req *pull.Request) {
		q := req.Queue
		pctx, cancel := r.persistContext(ctx)
		defer cancel()
		if err := r.cfg.Offsets.Persist(pctx, q); err != nil {
			// Its broker is away (the usual reason): keep the offset for when the
			// queue comes back, so what was consumed is not consumed again.
			if off, rerr := r.cfg.Offsets.Read(pctx, q, offset.ReadFromMemory); rerr == nil && off >= 0 {
				r.mu.Lock()
				r.unsaved[q] = off
				r.mu.Unlock()
			}
			r.logf(logging.LevelWarn, "persisting the offset of a dropped queue failed; it is kept for when the queue comes back", q, err)
		}
		r.cfg.Offsets.Remove(q)
		if r.cfg.AfterRemove != nil {
			r.cfg.AfterRemove(pctx, q, req.PQ, true)
		}
		req.PQ.Discard()
	})
}

// restart drops reqs' queues to create them again at the offsets in at; see the top of
// this file.
func (r *Rebalancer) restart(ctx context.Context, reqs []*pull.Request, at map[message.Queue]int64, why string) int {
	for _, req := range reqs {
		req.PQ.Discard()
	}
	restartAt := func(ctx context.Context, req *pull.Request) {
		q, off := req.Queue, at[req.Queue]
		r.mu.Lock()
		r.restartAt[q] = off
		r.mu.Unlock()
		r.cfg.Offsets.UpdateAndFreeze(q, off)
		pctx, cancel := r.persistContext(ctx)
		defer cancel()
		if err := r.cfg.Offsets.Persist(pctx, q); err != nil {
			r.logf(logging.LevelWarn, "persisting a corrected offset failed; it is written again when the queue restarts", q, err)
		}
	}
	return r.dropEach(ctx, reqs, why, false, restartAt, func(ctx context.Context, req *pull.Request) {
		if r.cfg.AfterRemove != nil {
			pctx, cancel := r.persistContext(ctx)
			defer cancel()
			r.cfg.AfterRemove(pctx, req.Queue, req.PQ, false) // the queue stays ours
		}
	})
}

// dropEach marks reqs dropped and, with at most maxParallelDrops goroutines, runs first
// (when not nil), BeforeRemove and then finish for each; the queues BeforeRemove
// accepted leave the table. It returns how many left.
func (r *Rebalancer) dropEach(ctx context.Context, reqs []*pull.Request, why string, release bool,
	first, finish func(ctx context.Context, req *pull.Request)) int {
	if len(reqs) == 0 {
		return 0
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		removed []*pull.Request
		slots   = make(chan struct{}, maxParallelDrops)
	)
	for _, req := range reqs {
		req.PQ.SetDropped(true)
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			if first != nil {
				first(ctx, req)
			}
			if r.cfg.BeforeRemove != nil && !r.cfg.BeforeRemove(ctx, req.Queue, req.PQ, release) {
				return // kept, dropped, for a later pass to try again
			}
			finish(ctx, req)
			mu.Lock()
			removed = append(removed, req)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.mu.Lock()
	for _, req := range removed {
		if r.table[req.Queue] == req {
			delete(r.table, req.Queue)
		}
	}
	r.mu.Unlock()
	for _, req := range removed {
		r.logf(logging.LevelInfo, "queue dropped: "+why, req.Queue, nil)
	}
	if len(removed) < len(reqs) {
		r.retrySoon()
	}
	return len(removed)
}

// persistContext returns the context offsets are persisted with when a queue is
// dropped: not cancelled with ctx (a pass cancelled by Stop, a shutdown out of time),
// since an offset not persisted now is consumed again by the queue's next owner, but
// bounded by the persist timeout.
func (r *Rebalancer) persistContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := r.cfg.PersistTimeout
	if d <= 0 {
		d = 3 * time.Second
	}
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}
