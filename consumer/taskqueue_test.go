package consumer

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/pull"
)

func TestTaskQueueBatchesInOrderAndGrows(t *testing.T) {
	q := newTaskQueue()
	req := &pull.Request{}
	msgs := make([]*message.Ext, 300)
	for i := range msgs {
		msgs[i] = &message.Ext{QueueOffset: int64(i)}
	}
	require.True(t, q.pushBatches(req, msgs, 7, false, nil))
	require.Equal(t, 43, q.len())
	w := q.worker()
	next := int64(0)
	for q.len() > 0 {
		tk, ok := w.pop()
		require.True(t, ok)
		require.LessOrEqual(t, len(tk.msgs), 7)
		require.Equal(t, len(tk.msgs), cap(tk.msgs), "capacity clipped: a listener's append cannot reach the next batch")
		for _, m := range tk.msgs {
			require.Equal(t, next, m.QueueOffset)
			next++
		}
	}
	require.Equal(t, int64(300), next)
}

func TestTaskQueueCloseWakesWorkers(t *testing.T) {
	q := newTaskQueue()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok := q.worker().pop()
			require.False(t, ok)
		}()
	}
	q.close()
	wg.Wait()
	require.False(t, q.push(task{}))
	require.False(t, q.pushBatches(&pull.Request{}, []*message.Ext{{}}, 1, false, nil))
}

// TestTaskQueueWakesAWorkerPerTask checks the wake-up chain: one push of a batch of
// tasks must end up waking as many waiting workers as there are tasks, since each task
// here blocks its worker until every task has been popped.
func TestTaskQueueWakesAWorkerPerTask(t *testing.T) {
	requireAWorkerPerTask(t, newTaskQueue(), "not every task got a worker of its own")
}

// requireAWorkerPerTask pushes four tasks that each block their worker until all four
// were popped, to four waiting workers, and checks that each gets a worker of its own.
func requireAWorkerPerTask(t *testing.T, q *taskQueue, what string) {
	t.Helper()
	const workers = 4
	var all sync.WaitGroup
	all.Add(workers)
	wg := startWorkers(t, q, workers, func(task) {
		all.Done()
		all.Wait() // blocks until every task is popped by a worker of its own
	})
	msgs := make([]*message.Ext, workers)
	for i := range msgs {
		msgs[i] = &message.Ext{QueueOffset: int64(i)}
	}
	require.True(t, q.pushBatches(&pull.Request{}, msgs, 1, false, nil))
	done := make(chan struct{})
	go func() { all.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
	q.close()
	wg.Wait()
}

// A queue with one task is served within one round, not after everything another queue
// queued before it.
func TestTaskQueueServesQueuesInTurn(t *testing.T) {
	q := newTaskQueue()
	main, retry := &pull.Request{}, &pull.Request{}
	busy := make([]*message.Ext, 1000)
	for i := range busy {
		busy[i] = &message.Ext{QueueOffset: int64(i)}
	}
	require.True(t, q.pushBatches(main, busy, 1, false, nil))
	require.True(t, q.pushBatches(retry, []*message.Ext{{QueueOffset: 7}}, 1, false, nil))
	w := q.worker()
	first, _ := w.pop()
	second, _ := w.pop()
	require.Same(t, main, first.req)
	require.Same(t, retry, second.req, "the retry queue's task comes second, not 1001st")
	// The main queue's tasks keep their order.
	next := int64(1)
	for q.len() > 0 {
		tk, _ := w.pop()
		require.Same(t, main, tk.req)
		require.Equal(t, next, tk.msgs[0].QueueOffset)
		next++
	}
	require.Empty(t, q.lanes, "empty lanes are retired")
	require.Len(t, q.free, 2, "and kept for reuse")
	require.True(t, q.pushBatches(retry, []*message.Ext{{QueueOffset: 8}}, 1, false, nil))
	require.Len(t, q.free, 1, "a new lane reuses a retired one")
}

// startWorkers starts n workers that pop tasks and hand each to run, and waits until
// all of them wait for work. They end when q closes.
func startWorkers(t *testing.T, q *taskQueue, n int, run func(task)) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := q.worker()
			for {
				tk, ok := w.pop()
				if !ok {
					return
				}
				run(tk)
			}
		}()
	}
	require.Eventually(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.waiting == n
	}, 10*time.Second, time.Millisecond, "workers never waited")
	return &wg
}

// Quick tasks are drained by the worker already running: a pull's 32 calls wake one
// worker, not one per call. The queue's clock is frozen, so every task takes no time.
func TestTaskQueueQuickTasksWakeOneWorker(t *testing.T) {
	q := newTaskQueue()
	q.clock = func() time.Duration { return 0 }
	q.avg, q.period = 0, time.Hour
	var done sync.WaitGroup
	done.Add(32)
	wg := startWorkers(t, q, 4, func(task) { done.Done() })
	msgs := make([]*message.Ext, 32)
	for i := range msgs {
		msgs[i] = &message.Ext{QueueOffset: int64(i)}
	}
	require.True(t, q.pushBatches(&pull.Request{}, msgs, 1, false, nil))
	done.Wait()
	q.mu.Lock()
	wakes := q.wakes
	q.mu.Unlock()
	require.Equal(t, uint64(1), wakes)
	q.close()
	wg.Wait()
}

// Tasks that were quick until now but block their workers still get a worker each: the
// backstop finds that no task ended for a period and wakes the others. Each task here
// blocks until every task has been popped.
func TestTaskQueueStuckTasksGetWorkers(t *testing.T) {
	q := newTaskQueue()
	q.clock = func() time.Duration { return 0 }
	q.avg, q.period = 0, 5*time.Millisecond
	requireAWorkerPerTask(t, q, "tasks behind a stuck worker never got workers of their own")
}

// The average follows the tasks' times: slow tasks raise it, so their successors are
// spread over the workers at once.
func TestTaskQueueLearnsTaskTimes(t *testing.T) {
	q := newTaskQueue()
	var now time.Duration
	q.clock = func() time.Duration { return now }
	q.avg = 0
	w := q.worker()
	msgs := make([]*message.Ext, 8)
	for i := range msgs {
		msgs[i] = &message.Ext{}
	}
	require.True(t, q.pushBatches(&pull.Request{}, msgs, 1, false, nil))
	for range msgs {
		_, ok := w.pop()
		require.True(t, ok)
		now += 10 * time.Millisecond // each task takes 10 ms
	}
	q.close()
	_, ok := w.pop() // ends the eighth task with the queue empty: the run is reported
	require.False(t, ok)
	q.mu.Lock()
	require.Equal(t, 10*time.Millisecond/4, q.avg, "one sample of 8 tasks of 10 ms, weighted a quarter")
	q.mu.Unlock()
}

// more gives a worker the next task of its queue while tasks are quick, up to maxRun
// in a run, and leaves the rest queued, where pop finds them in turn.
func TestTaskQueueMore(t *testing.T) {
	q := newTaskQueue()
	q.clock = func() time.Duration { return 0 }
	a, b := &pull.Request{}, &pull.Request{}
	msgs := make([]*message.Ext, 40)
	for i := range msgs {
		msgs[i] = &message.Ext{QueueOffset: int64(i)}
	}
	require.True(t, q.pushBatches(a, msgs, 1, false, nil))
	require.True(t, q.pushBatches(b, msgs[:3], 1, false, nil))
	w := q.worker()
	quickly := time.Microsecond

	tk, ok := w.pop()
	require.True(t, ok)
	require.Same(t, a, tk.req)
	_, ok = w.more(a, quickly, 1)
	require.False(t, ok, "tasks are taken one by one until they are known to be quick")

	q.mu.Lock()
	q.avg = quickly
	q.mu.Unlock()
	tk, ok = w.pop()
	require.True(t, ok)
	require.Same(t, b, tk.req, "b's turn")
	for i := 1; i < 3; i++ {
		tk, ok = w.more(b, quickly, i)
		require.True(t, ok)
		require.Equal(t, int64(i), tk.msgs[0].QueueOffset)
	}
	_, ok = w.more(b, quickly, 3)
	require.False(t, ok, "b has no task left")

	tk, ok = w.pop()
	require.True(t, ok)
	require.Same(t, a, tk.req)
	require.Equal(t, int64(1), tk.msgs[0].QueueOffset)
	_, has := q.lanes[b]
	require.True(t, has, "b's emptied lane waits for its turn")
	for i := 1; i < maxRun; i++ {
		tk, ok = w.more(a, quickly, i)
		require.True(t, ok)
		require.Equal(t, int64(1+i), tk.msgs[0].QueueOffset, "in order")
	}
	_, ok = w.more(a, quickly, maxRun)
	require.False(t, ok, "a run ends at maxRun tasks")

	tk, ok = w.pop()
	require.True(t, ok)
	require.Equal(t, int64(33), tk.msgs[0].QueueOffset)
	_, has = q.lanes[b]
	require.False(t, has, "b's emptied lane was retired when its turn came")
	_, ok = w.more(a, 2*quickCall, 1)
	require.False(t, ok, "a slow call ends the run")

	tk, ok = w.pop()
	require.True(t, ok)
	require.Equal(t, int64(34), tk.msgs[0].QueueOffset)
	require.True(t, q.push(task{req: a})) // an orderly queue's task: no messages
	for i := 1; i < 6; i++ {
		_, ok = w.more(a, quickly, i)
		require.True(t, ok)
	}
	_, ok = w.more(a, quickly, 6)
	require.False(t, ok, "an orderly task is not run in a run")
	tk, ok = w.pop()
	require.True(t, ok)
	require.Nil(t, tk.msgs)

	q.close()
	_, ok = w.pop()
	require.False(t, ok)
	q.mu.Lock()
	defer q.mu.Unlock()
	require.Equal(t, uint64(44), q.ended, "every task taken ended once")
	require.Zero(t, q.active)
}
