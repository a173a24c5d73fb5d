package consumer

import (
	"context"
	"sync/atomic"
	"time"
)

// Idle runs: a concurrent consumer's quick listener calls run on the connection read
// loop that pulled their messages, when it has handled every frame it read and would
// wait for the next (remoting.IdleWork), instead of on a worker woken for them. On a
// small machine a worker's wake-up costs more than a pull's quick calls: a thread
// woken on the other core, and there the broker's CPU (the fake broker's realistic
// mode and a real 4.9.8: about a fifth of the client's CPU per message, and the
// broker's time per pull). The calls are the same calls with the same rules (consume,
// runs, results, offsets); what differs is the goroutine:
//
//   - A pull's answer queues its calls without waking a worker (pushBatches with
//     deferWake) and the read loop's idle run takes them, as a worker would, when they
//     are quick (on average at most WithReadLoopConsume's time, by default half of
//     quickCall, as runs require) and the workers running do not already reach the
//     pool's size, up to maxIdleRun tasks; tasks it leaves get workers by the wake
//     rule. Slow listeners, orderly and POP consumption keep the workers.
//   - A call that turns slow is taken care of by the remoting layer: after takeover its
//     connection's reading goes on in another goroutine, and the one running the call
//     ends with the idle run. A failed call hands the connection off before its
//     send-backs, whose answers come on a connection the read loop may be reading. Meanwhile the other queued tasks wait for the backstop,
//     as behind any worker stuck in a call.
//   - Stop waits for the idle runs in progress as for the workers.

// idleTakeover is how long an idle run may keep its read loop from reading: after it,
// another goroutine reads the connection.
const idleTakeover = wakeBackstop

// maxIdleRun is the most tasks one idle run takes: two pulls' worth of calls at the
// default batch sizes, so that the read loop gets back to the frames that arrived
// meanwhile. Shorter runs read those frames sooner but leave calls to workers: one pull's
// worth cost 0.16 CPU-s per million 128 B messages in the realistic benchmark, and its
// gain on a real broker was within the machine's spread (the README's "Quick calls on the
// read loop").
const maxIdleRun = 2 * maxRun

// idleWork is a consumer's remoting.IdleWork: its concurrent service's idle runs, once
// the service exists (the client instance, which takes the idle work, is made first).
type idleWork struct {
	svc atomic.Pointer[concurrentService]
}

// Pending reports whether a read loop queued tasks and left their wake to an idle run.
func (iw *idleWork) Pending() bool {
	s := iw.svc.Load()
	return s != nil && s.queue.deferred.Load()
}

// Run is an idle run; handOff hands the read loop off (see remoting.IdleWork).
func (iw *idleWork) Run(handOff func()) {
	if s := iw.svc.Load(); s != nil {
		s.runIdle(handOff)
	}
}

// idleKit is what an idle run needs of a worker's: the queue's hold, the reused
// listener context and hook call, and the clock.
type idleKit struct {
	w     *taskWorker
	cc    ConcurrentlyContext
	call  *ConsumeCall
	clock workerClock
}

// runIdle runs quick listener calls queued for the workers on the calling goroutine, a
// read loop in its idle work.
func (s *concurrentService) runIdle(handOff func()) {
	q := s.queue
	k, t, ok := q.takeIdle(s.newIdleKit)
	if ok {
		k.w.handOff = handOff
	}
	for ok {
		took := s.consume(t, k.w, &k.cc, k.call, &k.clock)
		t, ok = q.nextIdle(k, took)
	}
}

func (s *concurrentService) newIdleKit() *idleKit {
	k := &idleKit{w: s.queue.worker()}
	if s.c.hooks.consumeHooked() {
		k.call = new(ConsumeCall)
	}
	return k
}

// takeIdle begins an idle run with its first task: ok is false when there is none the
// run should take (see idleRunnable), and then the queue wakes a worker for its tasks if
// they need one.
func (q *taskQueue) takeIdle(newKit func() *idleKit) (k *idleKit, t task, ok bool) {
	q.mu.Lock()
	q.deferred.Store(false)
	if !q.idleRunnableLocked() {
		q.wakeAndUnlock()
		return nil, task{}, false
	}
	if n := len(q.idleKits); n > 0 {
		k, q.idleKits = q.idleKits[n-1], q.idleKits[:n-1]
	} else {
		k = newKit()
	}
	q.idleRuns++
	k.w.taken = 1
	k.w.mark = q.clock()
	return k, k.w.takeAndUnlock(), true
}

// nextIdle ends the idle run's current task, whose last call took took, and takes the
// next one when the run goes on (that call was quick, as runs require, fewer than
// maxIdleRun were taken, and idleRunnable); otherwise it ends the run, waking a worker
// for the tasks left if they need one.
func (q *taskQueue) nextIdle(k *idleKit, took time.Duration) (t task, ok bool) {
	w := k.w
	q.mu.Lock()
	w.endTaskLocked() // unless more ended it
	if took <= quickCall && w.taken < maxIdleRun && q.idleRunnableLocked() {
		w.taken++
		return w.takeAndUnlock(), true
	}
	if w.sampled > 0 {
		w.sampleLocked()
	}
	w.handOff = nil
	q.idleKits = append(q.idleKits, k)
	if q.idleRuns--; q.idleRuns == 0 && q.idleDone != nil {
		close(q.idleDone)
		q.idleDone = nil
	}
	q.wakeAndUnlock()
	return task{}, false
}

// idleRunnableLocked reports whether an idle run should take the next task: there is
// one, a pulled queue's listener call, tasks take at most idleAvg on average, and the
// tasks running do not reach the limit.
func (q *taskQueue) idleRunnableLocked() bool {
	return !q.closed && q.n > 0 && q.avg <= q.idleAvg && !q.atLimitLocked(0) && quick(q.frontLocked().tasks.peek())
}

// waitIdleRuns waits, within ctx, for the idle runs in progress to end. Once the queue is
// closed no idle run begins.
func (q *taskQueue) waitIdleRuns(ctx context.Context) error {
	q.mu.Lock()
	if q.idleRuns == 0 {
		q.mu.Unlock()
		return nil
	}
	if q.idleDone == nil {
		q.idleDone = make(chan struct{})
	}
	done := q.idleDone
	q.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
