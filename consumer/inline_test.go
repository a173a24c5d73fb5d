package consumer

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/pull"
)

// newIdleQueue returns a task queue whose clock is frozen (every task takes no time)
// and whose tasks are known to be quick, with the given limit.
func newIdleQueue(limit int) *taskQueue {
	q := newTaskQueue()
	q.clock = func() time.Duration { return 0 }
	q.avg, q.period, q.limit, q.idleAvg = 0, time.Hour, limit, DefaultReadLoopCallAvg
	return q
}

func msgsOf(n int) []*message.Ext {
	msgs := make([]*message.Ext, n)
	for i := range msgs {
		msgs[i] = &message.Ext{QueueOffset: int64(i)}
	}
	return msgs
}

// beginIdle begins an idle run on q with a new kit, as runIdle does.
func beginIdle(q *taskQueue) (*idleKit, task, bool) {
	return q.takeIdle(func() *idleKit { return &idleKit{w: q.worker()} })
}

// idleRun runs an idle run on q as concurrentService.runIdle does, with run for each
// task; it returns the tasks it ran.
func idleRun(q *taskQueue, run func(task)) (ran []task) {
	k, t, ok := beginIdle(q)
	for ok {
		run(t)
		ran = append(ran, t)
		t, ok = q.nextIdle(k, 0)
	}
	return ran
}

func wakesOf(q *taskQueue) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.wakes
}

// A pull's quick calls, queued by the read loop that read them, are run by its idle run,
// in order, without waking a worker.
func TestIdleRunTakesTheReadLoopsTasksWithoutAWake(t *testing.T) {
	q := newIdleQueue(20)
	var got atomic.Int32
	wg := startWorkers(t, q, 2, func(task) { got.Add(1) })
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(32), 1, true, nil))
	require.True(t, q.deferred.Load(), "the wake is left to the idle run")
	ran := idleRun(q, func(task) {})
	require.Len(t, ran, 32)
	for i, tk := range ran {
		require.Equal(t, int64(i), tk.msgs[0].QueueOffset)
	}
	require.False(t, q.deferred.Load())
	require.Zero(t, wakesOf(q))
	require.Zero(t, got.Load(), "no worker ran anything")
	q.mu.Lock()
	require.Zero(t, q.active)
	require.Zero(t, q.idleRuns)
	require.False(t, q.armed, "the backstop armed for the deferred wake is stopped")
	q.mu.Unlock()
	q.close()
	wg.Wait()
}

// An idle run takes at most maxIdleRun tasks; the rest go to workers, woken as the wake
// rule says.
func TestIdleRunLeavesTheRestToWorkers(t *testing.T) {
	q := newIdleQueue(20)
	var done sync.WaitGroup
	done.Add(3 * maxIdleRun)
	wg := startWorkers(t, q, 2, func(task) { done.Done() })
	a, b := &pull.Request{}, &pull.Request{}
	require.True(t, q.pushBatches(a, msgsOf(2*maxIdleRun), 1, true, nil))
	require.True(t, q.pushBatches(b, msgsOf(maxIdleRun), 1, true, nil))
	ran := idleRun(q, func(task) { done.Done() })
	require.Len(t, ran, maxIdleRun)
	require.Equal(t, a, ran[0].req)
	require.Equal(t, b, ran[1].req, "lanes take turns in an idle run as for workers")
	done.Wait() // the workers ran the rest
	require.Equal(t, uint64(1), wakesOf(q), "one worker woken for the tasks left, quick ones")
	q.close()
	wg.Wait()
}

// Slow tasks are not run on a read loop: the idle run wakes workers for them instead.
func TestIdleRunLeavesSlowTasksToWorkers(t *testing.T) {
	q := newIdleQueue(20)
	q.avg = time.Millisecond
	var done sync.WaitGroup
	done.Add(4)
	wg := startWorkers(t, q, 4, func(task) { done.Done() })
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(4), 1, true, nil))
	require.Empty(t, idleRun(q, func(task) { t.Error("an idle run ran a slow task") }))
	done.Wait()
	require.Equal(t, uint64(4), wakesOf(q), "a worker for each slow task")
	q.close()
	wg.Wait()
}

// Tasks that are not a pulled queue's listener calls (POP) are never run on a read loop.
func TestIdleRunLeavesPopTasksToWorkers(t *testing.T) {
	q := newIdleQueue(20)
	var done sync.WaitGroup
	done.Add(1)
	wg := startWorkers(t, q, 1, func(task) { done.Done() })
	q.mu.Lock()
	q.pushLocked(task{msgs: msgsOf(1), pop: &popTask{r: &pull.PopRequest{}}})
	q.deferred.Store(true)
	q.mu.Unlock()
	require.Empty(t, idleRun(q, func(task) { t.Error("an idle run ran a POP task") }))
	done.Wait()
	q.close()
	wg.Wait()
}

// Idle runs count against the pool's size: with a limit of one, a worker does not take a
// task while an idle run runs one, and an idle run does not begin while a worker runs.
func TestIdleRunsKeepTheLimit(t *testing.T) {
	q := newIdleQueue(1)
	var running, most atomic.Int32
	enter := func() {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
	}
	var done sync.WaitGroup
	done.Add(2)
	wg := startWorkers(t, q, 1, func(task) {
		enter()
		running.Add(-1)
		done.Done()
	})
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(1), 1, true, nil))
	k, first, ok := beginIdle(q)
	require.True(t, ok)
	enter()
	// Another read loop's answer: its tasks are not the idle run's, and wake the worker
	// by the rule (the running call counts as busy for a long time).
	q.mu.Lock()
	q.avg = time.Millisecond
	q.mu.Unlock()
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(1), 1, false, nil))
	time.Sleep(20 * time.Millisecond) // the worker would run its task now if it could
	require.Equal(t, int32(1), most.Load(), "a worker ran a task while the idle run ran one")
	running.Add(-1)
	done.Done()
	k.w.taken = maxIdleRun // the run ends with this task
	_, ok = q.nextIdle(k, 0)
	require.False(t, ok)
	done.Wait()
	require.Equal(t, int32(1), most.Load())
	require.NotNil(t, first.req)

	// A worker running: no idle run begins.
	block := make(chan struct{})
	started := make(chan struct{})
	q.close()
	wg.Wait()
	q = newIdleQueue(1)
	var once sync.Once
	wg = startWorkers(t, q, 1, func(task) { once.Do(func() { close(started); <-block }) })
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(1), 1, false, nil))
	<-started
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(1), 1, true, nil))
	require.Empty(t, idleRun(q, func(task) { t.Error("an idle run began at the limit") }))
	close(block)
	q.close()
	wg.Wait()
}

// A deferred wake whose idle run never comes (the read loop's connection closed) is
// made by the backstop, without taking the tasks for slow ones.
func TestDeferredWakeWithoutIdleRunBackstop(t *testing.T) {
	q := newIdleQueue(20)
	q.period = 5 * time.Millisecond
	var done sync.WaitGroup
	done.Add(1)
	wg := startWorkers(t, q, 1, func(task) { done.Done() })
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(1), 1, true, nil))
	done.Wait()
	q.mu.Lock()
	require.Zero(t, q.avg, "the average is not raised: the tasks were not slow")
	require.False(t, q.deferred.Load())
	q.mu.Unlock()
	q.close()
	wg.Wait()
}

// Stop waits for the idle runs in progress, within its context.
func TestWaitIdleRuns(t *testing.T) {
	q := newIdleQueue(20)
	require.NoError(t, q.waitIdleRuns(context.Background()), "none in progress")
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(1), 1, true, nil))
	k, _, ok := beginIdle(q)
	require.True(t, ok)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, q.waitIdleRuns(ctx), context.DeadlineExceeded)
	ended := make(chan error, 1)
	go func() { ended <- q.waitIdleRuns(context.Background()) }()
	_, ok = q.nextIdle(k, 0)
	require.False(t, ok)
	require.NoError(t, <-ended)
	q.close()
	_, _, ok = beginIdle(q)
	require.False(t, ok, "no idle run begins once the queue is closed")
}

// A call that took longer than the wake budget ends the idle run, as it ends a worker's
// run: the tasks left go to workers.
func TestIdleRunEndsAfterASlowCall(t *testing.T) {
	q := newIdleQueue(20)
	var done sync.WaitGroup
	done.Add(3)
	wg := startWorkers(t, q, 1, func(task) { done.Done() })
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(4), 1, true, nil))
	k, _, ok := beginIdle(q)
	require.True(t, ok)
	_, ok = q.nextIdle(k, 2*quickCall)
	require.False(t, ok, "the run went on after a slow call")
	done.Wait()
	require.Equal(t, uint64(1), wakesOf(q))
	q.close()
	wg.Wait()
}

// The backstop still finds slow calls while read loops keep deferring wakes: a task that
// ran for a whole period, none ending, raises the average, and the next worker is woken.
func TestBackstopFindsSlowCallsBesideDeferredWakes(t *testing.T) {
	q := newIdleQueue(20)
	q.period = 5 * time.Millisecond
	var done sync.WaitGroup
	done.Add(1)
	release := make(chan struct{})
	wg := startWorkers(t, q, 1, func(task) { done.Done(); <-release }) // its own sample waits
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(1), 1, true, nil))
	k, _, ok := beginIdle(q) // the call hangs
	require.True(t, ok)
	// Another pull's answer.
	require.True(t, q.pushBatches(&pull.Request{}, msgsOf(1), 1, true, nil))
	// The backstop wakes the worker.
	done.Wait()
	q.mu.Lock()
	require.Equal(t, q.period, q.avg, "the hanging call raised the average")
	q.mu.Unlock()
	close(release)
	_, ok = q.nextIdle(k, time.Second)
	require.False(t, ok)
	q.close()
	wg.Wait()
}
