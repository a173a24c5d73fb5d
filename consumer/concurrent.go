package consumer

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
)

// Java's constants for concurrent consumption.
const (
	// reconsumeLaterDelay is how long a batch whose send-back failed waits before it is
	// consumed again locally.
	reconsumeLaterDelay = 5 * time.Second
	// timeoutDelayLevel is the delay level of a message sent back because its listener
	// call took longer than the consume timeout.
	timeoutDelayLevel = 3
	// defaultMaxReconsumeConcurrently is MaxReconsumeTimes -1 for concurrent consumers.
	defaultMaxReconsumeConcurrently = 16
	// sweepBacklog bounds the batches of expired messages waiting for the sweeper; when
	// it is full, the next check (a second later) finds them again.
	sweepBacklog = 256
)

// concurrentService is the concurrent consume service: a fixed pool of workers fed by a
// taskQueue. It applies Java's result rules (ackIndex, send-back, its fallback, local
// re-consumption, increase-only offset updates) and the consume timeout.
//
// The messages past the consume timeout are sent back by a goroutine of their own, the
// sweeper, as Java's cleanExpiredMsg runs on its own scheduled thread: on the workers
// they would wait behind the very listener calls that are stuck, and with every worker
// stuck nothing would send them back.
type concurrentService struct {
	c         *PushConsumer
	listener  ConcurrentlyListener
	queue     *taskQueue
	workers   workerGroup
	sweep     chan task     // expired batches for the sweeper; bounded, never closed
	sweepStop chan struct{} // closed by stop: the sweeper returns
	sweeper   workerGroup   // the sweeper, started by start and stopped by stop
	idle      bool          // the read loops run quick calls in idle runs (inline.go)
}

func newConcurrentService(c *PushConsumer, l ConcurrentlyListener) *concurrentService {
	s := &concurrentService{c: c, listener: l, queue: newTaskQueue(),
		sweep: make(chan task, sweepBacklog), sweepStop: make(chan struct{}), idle: c.cfg.readLoopCallAvg > 0}
	if s.idle {
		s.queue.limit = c.cfg.consumeGoroutines // idle runs count against the pool's size
		s.queue.idleAvg = c.cfg.readLoopCallAvg
	}
	return s
}

func (s *concurrentService) start() {
	s.workers.start(s.c.cfg.consumeGoroutines, s.work)
	s.sweeper.start(1, s.sweepExpired)
}

// stop stops the sweeper (after the send-back it is making), drops the queued batches
// and waits, within ctx, for the listener calls in flight and the sweeper. The popped
// messages dropped are abandoned. Expired batches left to the sweeper stay cached.
func (s *concurrentService) stop(ctx context.Context) error {
	close(s.sweepStop)
	for _, t := range s.queue.close() {
		s.abandon(t.pop.r, t.pop.batch, t.pop.first, t.pop.first+len(t.msgs))
	}
	if err := s.workers.wait(ctx); err != nil {
		return fmt.Errorf("consumer: listener calls still running at shutdown: %w", err)
	}
	if err := s.queue.waitIdleRuns(ctx); err != nil {
		return fmt.Errorf("consumer: listener calls still running at shutdown: %w", err)
	}
	if err := s.sweeper.wait(ctx); err != nil {
		return fmt.Errorf("consumer: a timed-out message's send-back still running at shutdown: %w", err)
	}
	return nil
}

// Dispatch queues a pull's messages in batches; see pull.Dispatcher. It runs on the read
// loop that read the pull's answer, which runs the quick calls itself, in its idle run,
// unless idle runs are off (inline.go).
func (s *concurrentService) Dispatch(r *pull.Request, msgs []*message.Ext, _ bool, lease *pull.Lease) {
	if len(msgs) > 0 {
		s.queue.pushBatches(r, msgs, s.c.cfg.consumeBatchMaxSize, s.idle, lease)
	}
}

func (s *concurrentService) work() {
	// One context per worker, reset for every call: a listener gets it for the length of
	// its call only (its results are read when it returns), and a context allocated per
	// call was the one allocation per message left on the consume path.
	cc := new(ConcurrentlyContext)
	var call *ConsumeCall // reused like cc; only with consume hooks
	if s.c.hooks.consumeHooked() {
		call = new(ConsumeCall)
	}
	var clock workerClock
	var valid []bool // POP: which messages of a call may still be consumed
	w := s.queue.worker()
	for {
		t, ok := w.pop()
		if !ok {
			return
		}
		switch {
		case t.pop != nil:
			s.consumePop(t, cc, call, &clock, &valid) // pop.go
		default:
			s.consume(t, w, cc, call, &clock)
		}
	}
}

// workerClock reads the time for a consume worker from the monotonic clock alone: a
// listener call needs two readings, and time.Since costs one clock read where time.Now
// costs two (together they were 5 % of the consumer's CPU). The times it returns carry
// the monotonic reading, which is what durations and the ProcessQueue's consume-start
// stamps compare, and a wall time derived from a base that is read again every
// workerClockRebase readings, so it never drifts far from the wall clock.
type workerClock struct {
	base  time.Time
	reads int
}

const workerClockRebase = 1024

func (c *workerClock) now() time.Time {
	if c.reads%workerClockRebase == 0 {
		c.base = time.Now()
		c.reads++
		return c.base
	}
	c.reads++
	return c.base.Add(time.Since(c.base))
}

// consume makes the listener call of t, with cc reset for it, and applies its result;
// it returns how long the last call took (0 when the queue was dropped);
// then, while the calls are quick, the next calls of the same queue, one after another
// (a run: see taskWorker.more), with their ProcessQueue bookkeeping merged: the removal
// of a call's messages and the consume-start mark of the next call's under one lock,
// and the offset update once per run, or every runCommit while a run lasts. call is nil
// without consume hooks; with them it is reset and passed to them.
func (s *concurrentService) consume(t task, w *taskWorker, cc *ConcurrentlyContext, call *ConsumeCall, clock *workerClock) (took time.Duration) {
	r := t.req
	pq := r.PQ
	pq.BeginConsume() // before the dropped check: see rebalance's BeforeRemove
	defer pq.EndConsume()
	if pq.Dropped() {
		t.lease.Release()
		return 0 // the queue was taken away; its new owner consumes these
	}
	uq := s.c.names.UserQueue(r.Queue) // without the namespace: what the listener and hooks see
	begin := clock.now()
	pq.MarkConsumeStart(t.msgs, begin)
	offset, committed := int64(-1), begin
	var tally callTally // recorded with the offset: every runCommit and at the end
	for n := 1; ; n++ {
		status, end := s.callOne(t, uq, begin, cc, call, clock, &tally)
		failed := ackIndex(status, cc.AckIndex, len(t.msgs)) < len(t.msgs)-1
		if failed && w.handOff != nil && s.c.cfg.model == Clustering {
			// On a read loop: the send-backs wait for answers it may be the one to read.
			w.handOff()
			w.handOff = nil
		}
		done := s.settle(t, status, cc)
		var next task
		// A call with messages to send back ends the run: the send-backs took an unknown
		// time since end, which must not count against the next call's consume timeout.
		more := quick(t) && !failed && !pq.Dropped()
		if more {
			next, more = w.more(r, end.Sub(begin), n)
		}
		if off := pq.RemoveAndMark(done, next.msgs, end); off >= 0 {
			offset = off
		}
		t.lease.Release() // the call, its send-backs and its removal are over
		if offset >= 0 && (!more || end.Sub(committed) >= runCommit) {
			if !pq.Discarded() {
				s.c.offsets.UpdateFor(r.Lease, offset, true)
			}
			offset, committed = -1, end
			s.c.stats.record(r.Queue.Topic, &tally)
		}
		if !more {
			s.c.stats.record(r.Queue.Topic, &tally)
			return end.Sub(begin)
		}
		t, begin = next, end // the next call begins where this one ended: one clock read less
	}
}

// runCommit is how long a run of calls may go on before the offset the calls so far
// reached is updated: a queue dropped while a later call of the run hangs keeps
// (persists) at most this much of the run's progress too little, redelivering those
// messages to the next owner.
const runCommit = time.Millisecond

// callOne makes the listener call of t, with cc reset for it, from begin, with the
// consume hooks, and counts it in tally; it returns the call's status and its end.
func (s *concurrentService) callOne(t task, uq message.Queue, begin time.Time, cc *ConcurrentlyContext, call *ConsumeCall, clock *workerClock, tally *callTally) (ConcurrentlyStatus, time.Time) {
	*cc = ConcurrentlyContext{Queue: uq, AckIndex: defaultAckIndex}
	ctx := s.c.listenerCtx
	if call != nil {
		*call = ConsumeCall{Group: s.c.names.UserGroup, ClientID: s.c.clientID, Model: s.c.cfg.model, Queue: uq, Msgs: t.msgs, Begin: begin}
		ctx = s.c.hooks.beginCall(ctx, call)
	}
	status, panicked := s.call(ctx, t.msgs, cc)
	end := clock.now() // also the queue's last consume time: one clock read less per call
	took := end.Sub(begin)
	// The listener's AckIndex clamped to the batch: the raw value may be anything
	// (MaxInt meaning "all", or below -1), which would overflow or turn the counts
	// negative.
	ack := ackIndex(status, cc.AckIndex, len(t.msgs))
	if call != nil {
		call.Took, call.Status, call.Success = took, status.String(), status == ConsumeSuccess
		call.AckIndex = ack
		call.ReturnType = returnType(panicked, call.Success, took >= s.c.cfg.consumeTimeout)
		s.c.hooks.endCall(ctx, call)
	}
	tally.add(took, status == ConsumeSuccess, len(t.msgs), ack)
	return status, end
}

// call runs the listener with ctx; a panic counts as ReconsumeLater and is logged with
// its stack.
func (s *concurrentService) call(ctx context.Context, msgs []*message.Ext, cc *ConcurrentlyContext) (status ConcurrentlyStatus, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			status, panicked = ReconsumeLater, true
			s.c.logPanic(cc.Queue, msgs, p, debug.Stack())
		}
	}()
	status = s.listener.ConsumeConcurrently(ctx, msgs, cc)
	if status != ConsumeSuccess && status != ReconsumeLater {
		s.c.logf(logging.LevelWarn, "listener returned an unknown status; treating it as ReconsumeLater", cc.Queue, fmt.Errorf("status %d", status))
		status = ReconsumeLater
	}
	return status, false
}

// ackIndex is the index of the last message of n a call consumed: the context's AckIndex
// within the batch for ConsumeSuccess, -1 (none) for ReconsumeLater.
func ackIndex(status ConcurrentlyStatus, ack, n int) int {
	if status == ReconsumeLater {
		ack = -1
	}
	return max(min(ack, n-1), -1)
}

// returnType is how a listener call ended, by Java's rules (ConsumeMessageConcurrently-
// Service.ConsumeRequest.run): a panic, then a call as long as the consume timeout,
// then the status.
func returnType(panicked, success, timedOut bool) ConsumeReturnType {
	switch {
	case panicked:
		return ReturnException
	case timedOut:
		return ReturnTimeout
	case !success:
		return ReturnFailed
	default:
		return ReturnSuccess
	}
}

// settle is Java's processConsumeResult for one listener call, but for the removal:
// the messages after ackIndex are sent back (in clustering) or dropped with a log line
// (broadcasting); those whose send-back failed stay cached and are consumed again after
// 5 s. It returns the messages done, which consume removes from the ProcessQueue (the
// queue's offset then moves to the smallest offset still cached): t.msgs itself unless
// a send-back failed.
func (s *concurrentService) settle(t task, status ConcurrentlyStatus, cc *ConcurrentlyContext) (done []*message.Ext) {
	msgs := t.msgs
	ack := ackIndex(status, cc.AckIndex, len(msgs))

	done = msgs
	if ack < len(msgs)-1 {
		failed := msgs[ack+1:]
		if s.c.cfg.model == Broadcasting {
			for _, m := range failed {
				s.c.logMsg(logging.LevelWarn, "broadcasting: message consume failed; dropping it", t.req.Queue, m, nil)
			}
		} else {
			// Out of the call before the send-backs, which may take seconds: the
			// consume-timeout sweep must not send them back too.
			t.req.PQ.ClearConsumeStart(failed)
			var keep []*message.Ext
			for _, m := range failed {
				if !t.req.PQ.Contains(m) {
					continue // the consume timeout already sent it back
				}
				if !s.c.sendBack(m, int32(cc.DelayLevelWhenNextConsume)) {
					keep = append(keep, m)
				}
			}
			if len(keep) > 0 {
				done = make([]*message.Ext, 0, len(msgs)-len(keep))
				for _, m := range msgs {
					if !containsMsg(keep, m) {
						done = append(done, m)
					}
				}
				s.reconsumeLater(t.req, keep, t.lease)
			}
		}
	}
	return done
}

// reconsumeLater consumes msgs again locally after reconsumeLaterDelay, each with one
// more reconsume time, as Java does when a send-back and its fallback both failed. The
// messages stay cached meanwhile, so the offset cannot pass them; lent bodies stay lent
// (lease, of the call that failed, gets a reference until the calls are queued).
func (s *concurrentService) reconsumeLater(r *pull.Request, msgs []*message.Ext, lease *pull.Lease) {
	r.PQ.RetryLater(msgs) // not in a listener call until they are consumed again; one more reconsume time
	s.c.retriedLocally(r.Queue, len(msgs), reconsumeLaterDelay)
	lease.Acquire(1)
	s.c.sched.after(reconsumeLaterDelay, func() {
		defer lease.Release()
		if r.PQ.Dropped() {
			return
		}
		// Those the consume timeout sent back meanwhile are gone from the cache.
		if msgs := r.PQ.Cached(msgs); len(msgs) > 0 {
			s.queue.pushBatches(r, msgs, s.c.cfg.consumeBatchMaxSize, false, lease)
		}
	})
}

func containsMsg(list []*message.Ext, m *message.Ext) bool {
	for _, x := range list {
		if x == m {
			return true
		}
	}
	return false
}

// expire finds the messages of pq whose listener call has run longer than the consume
// timeout (Java's cleanExpiredMsg, checked every second here instead of every 15
// minutes) and hands them to the sweeper, which sends them back so the offset can move
// on: the scheduler must not wait on the network. Each handed over is stamped again so
// the next check does not hand it over twice; with the sweeper's backlog full, none is,
// and the next check finds them again.
func (s *concurrentService) expire(r *pull.Request, now time.Time) {
	expired := r.PQ.Expired(now, s.c.cfg.consumeTimeout, 16)
	if len(expired) == 0 {
		return
	}
	select {
	case s.sweep <- task{req: r, msgs: expired}:
		// Stamped after the hand-over: one the sweeper already removed is not cached,
		// and the stamp skips it, as it skips one whose call ended meanwhile (a lent
		// body may then be released); one it could not send back is tried a timeout
		// later.
		r.PQ.RestampConsumeStart(expired, now)
	default:
	}
}

// sweepExpired is the sweeper: it sends back the expired batches expire hands over,
// until stop.
func (s *concurrentService) sweepExpired() {
	for {
		select {
		case <-s.sweepStop:
			return
		case t := <-s.sweep:
			s.sendBackExpired(t)
		}
	}
}

// sendBackExpired sends back messages past the consume timeout (level 3) and removes
// those it could, so the offset moves past them; the listener call's own result is then
// ignored for them. A message whose send-back failed stays and is tried at a later
// check. Broadcasting never retries (Java's send-back there goes to a retry topic no
// broadcasting consumer reads): the message is dropped, with a warning. It gives up
// between messages when stop is called, or when the queue was dropped (its next owner
// consumes them); those left stay cached.
//
// Each message is checked to be still cached just before its own send-back, not once
// for all: a send-back can take seconds, and a listener call that returns meanwhile
// removes its messages, which are consumed and must not be redelivered.
func (s *concurrentService) sendBackExpired(t task) {
	pq := t.req.PQ
	for _, m := range t.msgs {
		select {
		case <-s.sweepStop:
			return
		default:
		}
		if pq.Dropped() {
			return // its next owner consumes what is left, as Java's sweep sees only the queues held
		}
		// A copy, taken as the message is found still in its call: the worker may count a
		// local retry on the message itself meanwhile (reconsumeLater).
		snap, ok := pq.InCall(m)
		if !ok {
			continue // consumed, sent back or kept for a local retry since the sweep picked it
		}
		if s.c.cfg.model == Broadcasting {
			s.c.logMsg(logging.LevelWarn, "listener call past the consume timeout; broadcasting drops the message", t.req.Queue, &snap, nil)
		} else {
			s.c.logMsg(logging.LevelWarn, "listener call past the consume timeout; sending the message back", t.req.Queue, &snap, nil)
			if !s.c.sendBack(&snap, timeoutDelayLevel) {
				continue
			}
		}
		if off := pq.Remove([]*message.Ext{m}); off >= 0 && !pq.Discarded() {
			s.c.offsets.UpdateFor(t.req.Lease, off, true)
		}
	}
}

// consumeDirectly runs the listener on one message for an admin tool (Java's
// consumeMessageDirectly): no retry, no offset change.
func (s *concurrentService) consumeDirectly(ctx context.Context, msg *message.Ext, brokerName string) *protocol.ConsumeMessageDirectlyResult {
	q := message.Queue{Topic: msg.Topic, BrokerName: brokerName, QueueID: msg.QueueID}
	cc := ConcurrentlyContext{Queue: q, AckIndex: defaultAckIndex}
	begin := time.Now()
	result := &protocol.ConsumeMessageDirectlyResult{AutoCommit: true}
	panicked := false
	func() {
		defer func() {
			if p := recover(); p != nil {
				panicked = true
				result.Remark = fmt.Sprint(p)
				s.c.logPanic(q, []*message.Ext{msg}, p, debug.Stack())
			}
		}()
		switch s.listener.ConsumeConcurrently(ctx, []*message.Ext{msg}, &cc) {
		case ConsumeSuccess:
			result.ConsumeResult = protocol.CRSuccess
		default:
			result.ConsumeResult = protocol.CRLater
		}
	}()
	if panicked {
		result.ConsumeResult = protocol.CRThrowException
	}
	result.SpentTimeMills = time.Since(begin).Milliseconds()
	return result
}

// beforeAdd accepts every queue: concurrent consumption needs no broker lock.
func (s *concurrentService) beforeAdd(context.Context, message.Queue, *processqueue.ProcessQueue) bool {
	return true
}

// beforeRemove waits, within removeWait, for the listener calls in flight on a queue that
// is being dropped, so their progress is in the offset persisted next and the queue's
// next owner does not consume them again.
func (s *concurrentService) beforeRemove(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue, release bool) bool {
	if !release {
		return true // a restart: the calls in flight are discarded, nothing to wait for
	}
	ctx, cancel := context.WithTimeout(ctx, removeWait)
	defer cancel()
	if err := pq.WaitConsumeIdle(ctx); err != nil {
		s.c.logf(logging.LevelWarn, "dropping a queue whose listener calls are still running; their messages may be consumed again by its next owner", q, err)
	}
	return true
}

// cancelAdd does nothing for concurrent consumption.
func (s *concurrentService) cancelAdd(context.Context, message.Queue, *processqueue.ProcessQueue) {}

// afterRemove does nothing for concurrent consumption.
func (s *concurrentService) afterRemove(context.Context, message.Queue, *processqueue.ProcessQueue, bool) {
}
