package rebalance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
)

// retryDelay is how soon a rebalance that could not complete is tried again.
const retryDelay = time.Second

// Rebalancer keeps this client's queue assignment: see the package documentation. Its
// loop goroutine runs a pass every Interval and whenever Trigger is called; passes never
// overlap.
type Rebalancer struct {
	cfg Config
	log logging.Logger

	mu    sync.RWMutex
	table map[message.Queue]*pull.Request
	// pops are the queues the brokers assigned in POP mode (assignment.go), and
	// clientSide the topics whose broker cannot assign: guarded by mu.
	pops       map[message.Queue]*pull.PopRequest
	clientSide map[string]bool

	illegalMu sync.Mutex
	illegal   []illegalOffset // queues whose offset the broker rejected

	// restartAt holds the start offsets of queues dropped to restart at a given offset
	// (an illegal offset corrected, an admin reset); create uses them instead of the
	// stored offset. Guarded by mu.
	restartAt map[message.Queue]int64

	// unsaved holds the offsets of queues released while their broker could not take
	// them (it left the routes, or went down): consumed, but not on the broker. When
	// such a queue is assigned to this client again, it starts at the larger of this and
	// the broker's offset, and writes it; when it goes to another member, it is
	// forgotten. Guarded by mu.
	unsaved map[message.Queue]int64

	passMu  sync.Mutex // one pass at a time
	trigger chan struct{}

	wakeMu   sync.Mutex
	wakeAt   time.Time     // when the loop should run a pass on its own; zero: none
	rearm    chan struct{} // wakeAt changed
	failing  bool          // this pass asked for a retry
	failures int           // consecutive passes that asked for one

	// pending holds queues gained but not created yet, waiting for their previous owner
	// (takeover.go). Guarded by passMu.
	pending map[message.Queue]*takeover
	// pass is what the pass in progress learnt of the brokers; nil between passes.
	// Guarded by passMu.
	pass *passState

	ctx       context.Context
	cancel    context.CancelFunc
	startOnce sync.Once
	done      chan struct{}
}

// New returns a Rebalancer for cfg. Start launches its loop.
func New(cfg Config) (*Rebalancer, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = logging.Nop()
	}
	if cfg.Paused == nil {
		cfg.Paused = func() bool { return false }
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Rebalancer{
		cfg:        cfg,
		log:        cfg.Logger,
		table:      make(map[message.Queue]*pull.Request),
		pops:       make(map[message.Queue]*pull.PopRequest),
		clientSide: make(map[string]bool),
		restartAt:  make(map[message.Queue]int64),
		unsaved:    make(map[message.Queue]int64),
		trigger:    make(chan struct{}, 1),
		rearm:      make(chan struct{}, 1),
		pending:    make(map[message.Queue]*takeover),
		ctx:        ctx,
		cancel:     cancel,
		done:       make(chan struct{}),
	}, nil
}

// Start launches the loop. Call Rebalance first when the first assignment must exist
// before Start returns.
func (r *Rebalancer) Start() { r.startOnce.Do(func() { go r.run() }) }

// Stop ends the loop, cancelling a pass in progress, and waits for it. Queues are kept;
// DropAll drops them.
func (r *Rebalancer) Stop() {
	r.cancel()
	r.startOnce.Do(func() { close(r.done) })
	<-r.done
}

// Trigger asks for a pass now, without waiting (NOTIFY_CONSUMER_IDS_CHANGED, a route
// change, resume).
func (r *Rebalancer) Trigger() {
	select {
	case r.trigger <- struct{}{}:
	default:
	}
}

// ProcessQueues returns the current assignment.
func (r *Rebalancer) ProcessQueues() map[message.Queue]*processqueue.ProcessQueue {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make(map[message.Queue]*processqueue.ProcessQueue, len(r.table))
	for q, req := range r.table {
		out[q] = req.PQ
	}
	return out
}

// Requests returns the pull requests of the current assignment. Callers may read their
// Queue and PQ; NextOffset belongs to whoever holds the request.
func (r *Rebalancer) Requests() []*pull.Request {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*pull.Request, 0, len(r.table))
	for _, req := range r.table {
		out = append(out, req)
	}
	return out
}

// Queues returns the queues currently assigned, sorted.
func (r *Rebalancer) Queues() []message.Queue {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]message.Queue, 0, len(r.table))
	for q := range r.table {
		out = append(out, q)
	}
	slices.SortFunc(out, message.Queue.Compare)
	return out
}

func (r *Rebalancer) run() {
	defer close(r.done)
	ticker := time.NewTicker(r.cfg.Interval)
	defer ticker.Stop()
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	defer wake.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-ticker.C:
		case <-r.trigger:
		case <-wake.C:
			r.wakeMu.Lock()
			r.wakeAt = time.Time{}
			r.wakeMu.Unlock()
		case <-r.rearm:
			r.wakeMu.Lock()
			at := r.wakeAt
			r.wakeMu.Unlock()
			if !at.IsZero() {
				wake.Reset(time.Until(at))
			}
			continue
		}
		r.Rebalance(r.ctx)
	}
}

// retrySoon asks the loop for another pass: after retryDelay, doubling with each
// consecutive pass that needs one, up to the rebalance interval, so a topic that stays
// unroutable does not cost a pass a second.
func (r *Rebalancer) retrySoon() {
	r.wakeMu.Lock()
	r.failing = true
	d := min(retryDelay<<min(r.failures, 6), r.cfg.Interval)
	r.wakeMu.Unlock()
	r.passAt(time.Now().Add(d))
}

// passAt asks the loop for a pass at t (or earlier, if one is already due earlier).
func (r *Rebalancer) passAt(t time.Time) {
	r.wakeMu.Lock()
	if !r.wakeAt.IsZero() && !t.Before(r.wakeAt) {
		r.wakeMu.Unlock()
		return
	}
	r.wakeAt = t
	r.wakeMu.Unlock()
	select {
	case r.rearm <- struct{}{}:
	default:
	}
}

// Rebalance runs one pass: for every subscribed topic, compute this client's queues,
// drop the ones it lost and create the ones it gained. It returns when the pass is done.
func (r *Rebalancer) Rebalance(ctx context.Context) {
	r.passMu.Lock()
	defer r.passMu.Unlock()
	if ctx.Err() != nil {
		return
	}
	r.wakeMu.Lock()
	r.failing = false
	r.wakeMu.Unlock()
	defer func() {
		r.wakeMu.Lock()
		if r.failing {
			r.failures++
		} else {
			r.failures = 0
		}
		r.wakeMu.Unlock()
	}()
	r.applyIllegalOffsets(ctx)
	if r.cfg.Paused() {
		return // resume triggers a pass
	}
	topics := r.cfg.Topics()
	r.pass = r.newPassState()
	defer r.endPass(time.Now(), len(topics))
	for _, topic := range topics {
		if ctx.Err() != nil {
			return
		}
		r.rebalanceTopic(ctx, topic)
	}
	r.dropTopicsNotSubscribed(ctx, topics)
}

func (r *Rebalancer) rebalanceTopic(ctx context.Context, topic string) {
	if r.brokerAssigns(topic) {
		r.rebalanceByBroker(ctx, topic) // assignment.go
		return
	}
	all, ok := r.cfg.Broker.Queues(topic)
	if !ok {
		r.logf(logging.LevelWarn, "no route for topic yet; not rebalancing it", message.Queue{Topic: topic}, nil)
		r.cfg.Broker.RequestRouteRefresh()
		r.retrySoon()
		return
	}
	if len(all) == 0 {
		// A route with no readable queue: nothing to consume (Java allocates over the
		// empty set and drops every queue of the topic).
		if r.update(ctx, topic, all, nil, true) && r.cfg.Changed != nil {
			r.cfg.Changed(topic, all, nil)
		}
		return
	}
	mine, alone := all, true
	if r.cfg.Clustering {
		ids, repeated, err := r.consumerIDs(ctx, topic, all)
		if err != nil {
			if ctx.Err() != nil {
				return // cancelled (Shutdown during the pass): nothing went wrong
			}
			if !repeated { // logged for the first topic of these brokers
				r.logf(logging.LevelWarn, "cannot get the group's consumer ids; keeping the current queues", message.Queue{Topic: topic}, err)
			}
			r.retrySoon()
			return
		}
		ids = slices.Clone(ids)
		slices.Sort(ids)
		alone = len(ids) == 1 && ids[0] == r.cfg.Broker.ClientID()
		mine, err = r.cfg.Strategy.Allocate(r.cfg.Group, r.cfg.Broker.ClientID(), all, ids)
		if err != nil {
			// Java applies the empty result when this client is not in the list yet.
			// The broker simply has not seen our heartbeat (a restarted broker, a race
			// with our first heartbeat): dropping every queue now would only re-deliver
			// what is in flight, so keep the current queues and try again soon.
			r.logf(logging.LevelWarn, "allocation failed; keeping the current queues and retrying soon", message.Queue{Topic: topic}, err)
			if errors.Is(err, ErrConsumerNotInList) {
				r.cfg.Broker.HeartbeatSoon()
			}
			r.retrySoon()
			return
		}
	}
	if r.update(ctx, topic, all, mine, alone) && r.cfg.Changed != nil {
		r.cfg.Changed(topic, all, mine)
	}
}

// dropTopicsNotSubscribed drops the queues of topics no longer subscribed.
func (r *Rebalancer) dropTopicsNotSubscribed(ctx context.Context, topics []string) {
	var gone []*pull.Request
	r.mu.RLock()
	for q, req := range r.table {
		if !slices.Contains(topics, q.Topic) {
			gone = append(gone, req)
		}
	}
	r.mu.RUnlock()
	r.release(ctx, gone, "topic no longer subscribed")
	r.dropPops(func(topic string) bool { return slices.Contains(topics, topic) })
}

// update makes topic's assignment equal mine, out of all, and reports whether it
// changed.
func (r *Rebalancer) update(ctx context.Context, topic string, all, mine []message.Queue, alone bool) bool {
	now := time.Now()
	var lost, expired []*pull.Request
	held := false // this client consumes some queue of topic already
	r.mu.RLock()
	for _, req := range r.requestsOf(topic) {
		q := req.Queue
		held = true
		if !slices.Contains(mine, q) {
			lost = append(lost, req)
		} else if (req.PQ.PullExpired(now) || req.PQ.Dropped()) && !r.illegalPending(req) {
			// Not pulled for too long, or dropped and kept (a removal BeforeRemove
			// deferred, a lost orderly lock): recreate it. One dropped for an illegal
			// offset after this pass applied those is left to the next pass, which
			// restarts it at the offset the broker gave (recreating it here would read
			// the offset the broker just rejected).
			expired = append(expired, req)
		}
	}
	r.mu.RUnlock()
	changed := r.release(ctx, lost, "no longer assigned") > 0
	r.release(ctx, expired, "not pulled for too long; recreating it")

	var gained, recreated, forgotten []message.Queue
	r.mu.Lock()
	for q := range r.restartAt {
		if q.Topic == topic && !slices.Contains(mine, q) {
			// Dropped to restart, then assigned elsewhere: its next owner starts from
			// the broker's offset, and so must this client if the queue comes back.
			delete(r.restartAt, q)
			forgotten = append(forgotten, q)
		}
	}
	for q := range r.unsaved {
		if q.Topic == topic && slices.Contains(all, q) && !slices.Contains(mine, q) {
			delete(r.unsaved, q) // routed again, and another member's: its offset wins
		}
	}
	for _, q := range mine {
		if _, ok := r.table[q]; ok {
			continue
		}
		_, restarting := r.restartAt[q]
		_, unsaved := r.unsaved[q]
		if restarting || unsaved || slices.ContainsFunc(expired, func(req *pull.Request) bool { return req.Queue == q }) {
			recreated = append(recreated, q) // ours all along: no one to wait for
		} else {
			gained = append(gained, q)
		}
	}
	r.mu.Unlock()
	for _, q := range forgotten {
		// Its frozen restart offset must not be written over the new owner's either.
		r.cfg.Offsets.Remove(q)
	}
	// Alone with nothing yet (a first start): no member to wait for. Alone while holding
	// queues, the queues gained come from a member that left or that a stale member list
	// leaves out (a restarted broker that has not heard from it yet): wait for it.
	if r.add(ctx, append(recreated, r.dueNow(ctx, topic, gained, alone && !held, now)...)) > 0 {
		changed = true
	}
	return changed
}

// add creates the queues gained, one goroutine per broker, and submits their pull
// requests. A queue whose start offset is unknown (the broker could not be asked) is
// not started this round, nor are the broker's other queues of this pass: a broker that
// does not answer costs the pass one request timeout, not one per queue. It returns how
// many it added.
func (r *Rebalancer) add(ctx context.Context, qs []message.Queue) int {
	if len(qs) == 0 {
		return 0
	}
	var (
		mu    sync.Mutex
		added []*pull.Request
	)
	eachByBroker(qs, func(q message.Queue) bool {
		if ctx.Err() != nil || r.pass.unanswered(q.BrokerName) {
			return false
		}
		req, brokerFailed := r.create(ctx, q)
		if brokerFailed {
			r.pass.setUnanswered(q.BrokerName) // retried soon, with the queues after it
			return false
		}
		if req != nil {
			mu.Lock()
			added = append(added, req)
			mu.Unlock()
		}
		return true
	})
	for _, req := range added {
		r.cfg.Puller.Submit(req)
	}
	return len(added)
}

// eachByBroker calls fn for every queue of qs, one goroutine per broker and the queues
// of a broker in turn, and returns when all are done: a broker slow to answer holds up
// only its own queues. fn returning false skips the broker's queues after q.
func eachByBroker(qs []message.Queue, fn func(q message.Queue) bool) {
	byBroker := make(map[string][]message.Queue)
	for _, q := range qs {
		byBroker[q.BrokerName] = append(byBroker[q.BrokerName], q)
	}
	var wg sync.WaitGroup
	for _, queues := range byBroker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, q := range queues {
				if !fn(q) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// create makes q's process queue and pull request. It returns nil when q is not
// started this round, with brokerFailed when that is because q's broker could not tell
// its start offset.
func (r *Rebalancer) create(ctx context.Context, q message.Queue) (req *pull.Request, brokerFailed bool) {
	pq := processqueue.New(time.Now())
	if r.cfg.BeforeAdd != nil && !r.cfg.BeforeAdd(ctx, q, pq) {
		r.retrySoon()
		return nil, false
	}
	cancelAdd := func() {
		if r.cfg.CancelAdd != nil {
			r.cfg.CancelAdd(ctx, q, pq)
		}
	}
	// A new lease: a stale (or frozen) in-memory offset from an earlier assignment goes,
	// and so do the late writes of that assignment's listener calls and pulls.
	lease := r.cfg.Offsets.Begin(q)
	r.mu.Lock()
	start, restart := r.restartAt[q]
	unsaved, hasUnsaved := r.unsaved[q]
	r.mu.Unlock()
	var err error
	if restart {
		// Stored again: its persist may have failed, and the next persist round
		// writes it.
		r.cfg.Offsets.Update(q, start, false)
	} else {
		start, err = r.startOffset(ctx, q)
		if err == nil && hasUnsaved && unsaved > start {
			// Consumed up to there before the broker went away: start there and write
			// it (the next commit does, if this one fails).
			start = unsaved
			r.cfg.Offsets.Update(q, start, true)
			if perr := r.cfg.Offsets.Persist(ctx, q); perr != nil {
				r.logf(logging.LevelWarn, "writing the offset kept while the broker was away failed; it is written with the next commit", q, perr)
			}
		}
	}
	if err != nil {
		cancelAdd()
		if ctx.Err() != nil {
			return nil, false // cancelled (Shutdown during the pass): nothing went wrong
		}
		r.logf(logging.LevelWarn, "cannot compute the queue's start offset; not starting it, nor the broker's next queues, this round", q, err)
		r.retrySoon()
		return nil, true
	}
	req = pull.NewRequest(q, pq, start)
	req.Lease = lease
	r.mu.Lock()
	_, exists := r.table[q]
	if !exists && ctx.Err() == nil {
		r.table[q] = req
		delete(r.restartAt, q)
		delete(r.unsaved, q)
	}
	r.mu.Unlock()
	if exists || ctx.Err() != nil {
		cancelAdd()
		return nil, false
	}
	if logging.Enabled(r.log, logging.LevelInfo) {
		r.log.Log(logging.LevelInfo, "queue added", "queue", q.String(), "offset", start)
	}
	return req, false
}

func (r *Rebalancer) logf(level logging.Level, msg string, q message.Queue, err error) {
	if !logging.Enabled(r.log, level) {
		return
	}
	kv := []any{"group", r.cfg.Group, "queue", q.String()}
	if q.BrokerName == "" {
		kv = []any{"group", r.cfg.Group, "topic", q.Topic}
	}
	if err != nil {
		kv = append(kv, "err", err)
	}
	r.log.Log(level, msg, kv...)
}
