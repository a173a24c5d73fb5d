package consumer

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
)

// Java's constants for orderly consumption.
const (
	// maxConsumeContinuously is how long one task consumes a queue before it yields its
	// worker to other queues (Java MAX_TIME_CONSUME_CONTINUOUSLY).
	maxConsumeContinuously = time.Minute
	// Delays before a queue's task runs again: after yielding or a re-lock (10 ms),
	// after finding the queue unlocked (100 ms, then a lock attempt), after a failed
	// lock attempt (3 s).
	orderlyAgainDelay   = 10 * time.Millisecond
	orderlyRelockDelay  = 100 * time.Millisecond
	orderlyLockFailWait = 3 * time.Second
	// suspend delays are clamped to this range (Java's submitConsumeRequestLater).
	minSuspend = 10 * time.Millisecond
	maxSuspend = 30 * time.Second
	// removeLockWait bounds how long dropping an orderly queue waits for the listener
	// call in progress on it (Java: 1 s in 4.9).
	removeLockWait = time.Second
)

// orderlyService is the orderly consume service: one task per queue at a time, which
// takes the queue's messages in offset order, batch by batch, while this client holds
// the queue's broker lock (clustering). The tasks run on the same fixed worker pool
// design as concurrent consumption: no goroutine per queue.
type orderlyService struct {
	c        *PushConsumer
	listener OrderlyListener
	queue    *taskQueue
	workers  workerGroup
	locks    *queueLocks // nil for broadcasting
	// stopping is set by stop: a running task ends after its listener call instead of
	// taking more of the cache, which Shutdown leaves unconsumed.
	stopping atomic.Bool
}

func newOrderlyService(c *PushConsumer, l OrderlyListener) *orderlyService {
	s := &orderlyService{c: c, listener: l, queue: newTaskQueue()}
	if c.cfg.model == Clustering {
		s.locks = &queueLocks{c: c}
	}
	return s
}

func (s *orderlyService) start() {
	s.workers.start(s.c.cfg.consumeGoroutines, s.work)
	if s.locks != nil {
		s.c.lockJobs = newScheduler() // closed by the consumer's teardown
		s.c.lockJobs.every(s.c.cfg.lockRenewInterval, s.locks.renewAll)
		s.c.lockJobs.run()
	}
}

func (s *orderlyService) stop(ctx context.Context) error {
	s.stopping.Store(true)
	s.queue.close()
	if err := s.workers.wait(ctx); err != nil {
		return fmt.Errorf("consumer: orderly listener calls still running at shutdown: %w", err)
	}
	return nil
}

// Dispatch starts a task for the queue when the ProcessQueue asks for one (no task owns
// the queue yet); see pull.Dispatcher. Lent bodies need nothing here: the pull service
// held them in r.Held as it cached them, until consumeBatch commits their messages.
func (s *orderlyService) Dispatch(r *pull.Request, _ []*message.Ext, dispatch bool, _ *pull.Lease) {
	if dispatch {
		s.queue.push(task{req: r})
	}
}

func (s *orderlyService) work() {
	var call *ConsumeCall // reused for every listener call of this worker; only with consume hooks
	if s.c.hooks.consumeHooked() {
		call = new(ConsumeCall)
	}
	oc := new(OrderlyContext) // reused for every listener call of this worker
	w := s.queue.worker()
	for {
		t, ok := w.pop()
		if !ok {
			return
		}
		if t.relock && !s.locks.relock(t.req.Queue, t.req.PQ) {
			if !t.req.PQ.Dropped() {
				s.relockLater(t.req, orderlyLockFailWait)
			}
			continue
		}
		s.run(t.req, call, oc)
	}
}

// later runs the queue's task again after d.
func (s *orderlyService) later(r *pull.Request, d time.Duration) {
	s.c.sched.after(d, func() {
		if !r.PQ.Dropped() {
			s.queue.push(task{req: r})
		}
	})
}

// run is one task: Java's ConsumeMessageOrderlyService.ConsumeRequest.run. call is the
// worker's ConsumeCall for the hooks (nil without consume hooks), oc its listener
// context.
func (s *orderlyService) run(r *pull.Request, call *ConsumeCall, oc *OrderlyContext) {
	pq := r.PQ
	if pq.Dropped() {
		return
	}
	// The clock is read once per call (a read costs as much as the rest of a quick
	// call's bookkeeping): now is the task's start, then the end of each call; it is
	// also the take's last consume time.
	now := time.Now()
	if s.locks != nil && !s.locks.valid(pq, now) {
		s.relockLater(r, orderlyRelockDelay)
		return
	}
	begin := now
	// The calls' statistics are recorded together, as a concurrent run's are: every
	// runCommit and when the task ends (a map lookup and four shared counters, not per
	// call).
	var tally callTally
	recorded := now
	defer s.c.stats.record(r.Queue.Topic, &tally)
	for {
		if pq.Dropped() || s.stopping.Load() {
			return
		}
		if s.locks != nil && !s.locks.valid(pq, now) {
			s.relockLater(r, orderlyAgainDelay)
			return
		}
		if now.Sub(begin) > maxConsumeContinuously {
			s.later(r, orderlyAgainDelay) // let other queues have the worker
			return
		}
		msgs := pq.TakeAt(s.c.cfg.consumeBatchMaxSize, now)
		if len(msgs) == 0 {
			return // Take cleared the queue's task mark; the next Put starts a task
		}
		var goOn bool
		if now, goOn = s.consumeBatch(r, msgs, call, oc, now, &tally); !goOn {
			return
		}
		if now.Sub(recorded) >= runCommit {
			s.c.stats.record(r.Queue.Topic, &tally)
			recorded = now
		}
	}
}

// consumeBatch calls the listener on msgs and applies the result (Java's
// processConsumeResult with autoCommit). now is the time, read just before msgs were
// taken; the call is counted in tally. It returns the time the call ended and whether
// the task may go on.
func (s *orderlyService) consumeBatch(r *pull.Request, msgs []*message.Ext, call *ConsumeCall, oc *OrderlyContext, now time.Time, tally *callTally) (end time.Time, goOn bool) {
	pq, q := r.PQ, r.Queue
	uq := s.c.names.UserQueue(q) // without the namespace: what the listener and hooks see
	*oc = OrderlyContext{Queue: uq, SuspendCurrentQueueTimeMillis: -1}
	// The consume lock keeps a rebalance from unlocking the queue in the middle of a
	// call; it is free unless a removal holds it.
	if !pq.TryLockConsume() {
		pq.Rollback()
		s.later(r, orderlyAgainDelay)
		return now, false
	}
	if pq.Dropped() {
		pq.UnlockConsume()
		pq.Rollback()
		return now, false
	}
	begin := now
	ctx := s.c.listenerCtx
	if call != nil {
		*call = ConsumeCall{Group: s.c.names.UserGroup, ClientID: s.c.clientID, Model: s.c.cfg.model, Orderly: true, Queue: uq, Msgs: msgs, Begin: begin}
		ctx = s.c.hooks.beginCall(ctx, call)
	}
	// The consume lock is held until the result is applied: a removal that waits for it
	// then persists an offset that includes this batch.
	defer pq.UnlockConsume()
	status, panicked := s.call(ctx, msgs, oc)
	took := time.Since(begin)
	end = begin.Add(took)
	ok := status == OrderlySuccess
	ack := len(msgs) - 1
	if !ok {
		ack = -1
	}
	if call != nil {
		call.Took, call.Status, call.Success, call.AckIndex = took, status.String(), ok, ack
		call.ReturnType = returnType(panicked, ok, took >= s.c.cfg.consumeTimeout)
		s.c.hooks.endCall(ctx, call)
		end = time.Now() // hooks may take long: neither the lock check nor the next call's time may include them
	}
	tally.add(took, ok, len(msgs), ack)

	if status == SuspendCurrentQueueAMoment {
		if again := s.retryLocally(msgs); again > 0 {
			pq.ConsumeAgain(msgs)
			delay := s.suspendDelay(oc.SuspendCurrentQueueTimeMillis)
			s.c.retriedLocally(q, again, delay)
			s.later(r, delay)
			return end, false
		}
		end = time.Now() // after sending to the dead-letter queue, which may have taken long
	}
	// Consumed, or past MaxReconsumeTimes and handed to the dead-letter queue. The
	// offset is stored even if the queue was just dropped: its removal persists it after
	// this call (it waits for the consume lock). Only a discarded queue's results are
	// void (a corrected or reset offset, or a removal already final).
	if off, committed := r.Held.Commit(pq); committed && !pq.Discarded() { // releases lent bodies
		s.c.offsets.UpdateFor(r.Lease, off, false)
	}
	return end, !pq.Dropped()
}

// retryLocally is Java's checkReconsumeTimes: the messages are consumed again here
// unless every one of them is past MaxReconsumeTimes and was sent to the dead-letter
// queue. Each message consumed again counts one more reconsume time. It returns how
// many are consumed again (0: the batch counts as consumed).
func (s *orderlyService) retryLocally(msgs []*message.Ext) int {
	limit := s.c.maxReconsumeTimes()
	again := 0
	for _, m := range msgs {
		if m.ReconsumeTimes >= limit {
			var begin time.Time
			if len(s.c.hooks.sendBack) > 0 {
				begin = time.Now()
			}
			err := s.c.inst.SendToDeadLetter(s.c.listenerCtx, s.c.group, m, limit)
			s.c.sentBack(SendBackEvent{Msg: m, DelayLevel: -1, Err: err}, begin, limit)
			if err == nil {
				s.c.logMsg(logging.LevelWarn, "orderly message past MaxReconsumeTimes sent to the dead-letter queue", m.Queue(), m, nil)
				continue
			}
			s.c.logMsg(logging.LevelError, "sending an orderly message to the dead-letter queue failed; consuming it again", m.Queue(), m, err)
		}
		m.ReconsumeTimes++
		again++
	}
	return again
}

// suspendDelay turns a context's suspend time into a delay: -1 means the consumer's
// option; the result is clamped to [10 ms, 30 s].
func (s *orderlyService) suspendDelay(ms int64) time.Duration {
	d := s.c.cfg.suspendCurrentQueueTime
	if ms >= 0 {
		d = time.Duration(ms) * time.Millisecond
	}
	return min(max(d, minSuspend), maxSuspend)
}

// call runs the listener with ctx; a panic counts as SuspendCurrentQueueAMoment.
func (s *orderlyService) call(ctx context.Context, msgs []*message.Ext, oc *OrderlyContext) (status OrderlyStatus, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			status, panicked = SuspendCurrentQueueAMoment, true
			s.c.logPanic(oc.Queue, msgs, p, debug.Stack())
		}
	}()
	status = s.listener.ConsumeOrderly(ctx, msgs, oc)
	if status != OrderlySuccess && status != SuspendCurrentQueueAMoment {
		s.c.logf(logging.LevelWarn, "orderly listener returned an unknown status; suspending the queue", oc.Queue, fmt.Errorf("status %d", status))
		status = SuspendCurrentQueueAMoment
	}
	return status, false
}

// relockLater tries to lock the queue after d and runs its task again: soon when the
// lock was obtained, after 3 s when not (Java's tryLockLaterAndReconsume).
func (s *orderlyService) relockLater(r *pull.Request, d time.Duration) {
	s.c.sched.after(d, func() {
		if r.PQ.Dropped() {
			return
		}
		// The lock call blocks; run it on a worker, not on the scheduler.
		s.queue.push(task{req: r, relock: true})
	})
}

// expire does nothing: orderly consumption has no consume timeout, as in Java.
func (s *orderlyService) expire(*pull.Request, time.Time) {}

// consumeDirectly runs the listener on one message for an admin tool.
func (s *orderlyService) consumeDirectly(ctx context.Context, msg *message.Ext, brokerName string) *protocol.ConsumeMessageDirectlyResult {
	q := message.Queue{Topic: msg.Topic, BrokerName: brokerName, QueueID: msg.QueueID}
	oc := OrderlyContext{Queue: q, SuspendCurrentQueueTimeMillis: -1}
	result := &protocol.ConsumeMessageDirectlyResult{Order: true, AutoCommit: true}
	begin := time.Now()
	panicked := false
	func() {
		defer func() {
			if p := recover(); p != nil {
				panicked = true
				result.Remark = fmt.Sprint(p)
				s.c.logPanic(q, []*message.Ext{msg}, p, debug.Stack())
			}
		}()
		if s.listener.ConsumeOrderly(ctx, []*message.Ext{msg}, &oc) == OrderlySuccess {
			result.ConsumeResult = protocol.CRSuccess
		} else {
			result.ConsumeResult = protocol.CRLater
		}
	}()
	if panicked {
		result.ConsumeResult = protocol.CRThrowException
	}
	result.SpentTimeMills = time.Since(begin).Milliseconds()
	return result
}

// beforeAdd locks a new queue on the broker (clustering).
func (s *orderlyService) beforeAdd(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue) bool {
	if s.locks == nil {
		return true
	}
	return s.locks.lockNew(ctx, q, pq)
}

// beforeRemove waits for the call in progress on the queue and keeps it from starting
// another until afterRemove.
func (s *orderlyService) beforeRemove(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue, _ bool) bool {
	if s.locks == nil {
		ctx, cancel := context.WithTimeout(ctx, removeLockWait)
		defer cancel()
		if err := pq.LockConsume(ctx); err != nil {
			return false
		}
		pq.UnlockConsume()
		return true
	}
	return s.locks.release(ctx, q, pq)
}

// cancelAdd releases the lock beforeAdd took for a queue that was not added after all.
func (s *orderlyService) cancelAdd(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue) {
	if s.locks != nil {
		s.locks.unlockBroker(ctx, q, pq)
	}
}

// afterRemove ends beforeRemove's hold on the queue: when the queue leaves this client,
// its broker lock is released, now that its offset is persisted; when it restarts here
// (a corrected or reset offset), the lock is kept for the new queue.
func (s *orderlyService) afterRemove(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue, release bool) {
	if s.locks == nil {
		return
	}
	if release {
		s.locks.unlock(ctx, q, pq)
	} else {
		pq.UnlockConsume()
	}
}
