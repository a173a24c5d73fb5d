package consumer

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
)

// task is work for a consume worker: for concurrent consumption, one listener call on
// a batch of one queue's messages; for orderly consumption, the queue's task (msgs nil),
// which consumes the queue batch by batch, or tries to lock it first (relock); for POP
// consumption (pop set, req nil), one listener call on msgs, the messages first to
// first+len(msgs) of a popped batch.
type task struct {
	req    *pull.Request
	msgs   []*message.Ext
	relock bool     // orderly: lock the queue first
	pop    *popTask // POP: where msgs come from; nil otherwise
	// lease holds msgs' bodies when they are lent (WithLentBodies): released once the
	// call, its send-backs and the removal of msgs are over. nil otherwise.
	lease *pull.Lease
}

// popTask is where a POP task's messages come from. The tasks of one popped batch share
// a slice of them, allocated once per pop.
type popTask struct {
	r     *pull.PopRequest       // the queue popped
	batch *processqueue.PopBatch // the batch the messages belong to
	first int                    // the index of the task's first message in the batch
}

// taskQueue feeds the consume workers. Tasks wait in one lane per queue (pull request),
// and workers take them from the lanes in turn, so a queue with few messages — a retry
// queue behind a main queue holding a thousand cached messages, say — is served within
// one round instead of after everything queued before it. Within a lane, tasks keep
// their order. Lanes are growable rings of task values, recycled when they empty, so
// queuing a batch allocates nothing in the steady state; pushing never blocks (memory is
// bounded by the pull service's flow control), popping waits for work.
//
// Workers are woken one at a time, and only when the workers already running are not
// enough: a push or a pop wakes a waiting worker when the queued tasks would keep the
// running (and already woken) workers busy for longer than wakeBudget, judged by the
// average time a task has taken. Waking a worker costs more than a quick listener call
// (a thread wake-up and a context switch, and a wake per task was three quarters of
// the consumer's goroutine wake-ups), so with quick listeners the worker that is
// already running drains a pull's calls and the others sleep on; with slow listeners
// every task queued gets a worker of its own, one hand-off after another. The average
// only learns from tasks that end, so a backstop timer covers a listener that turns
// slow: when no task ended for a backstop period while tasks waited, the average is
// raised to that period and the next worker is woken.
type taskQueue struct {
	mu      sync.Mutex
	cond    sync.Cond
	lanes   map[*pull.Request]*lane
	pops    map[*pull.PopRequest]*lane // the lanes of POP queues
	turn    laneRing                   // lanes with tasks, in the order they are served
	free    []*lane                    // empty lanes to reuse
	n       int                        // tasks queued in all lanes
	waiting int                        // workers in cond.Wait, woken ones included
	closed  bool

	// How busy the workers are, for the wake rule (see wakeLocked).
	clock    func() time.Duration // monotonic time since the queue was made
	waking   int                  // workers signalled that have not returned from cond.Wait yet
	active   int                  // workers running a task
	avg      time.Duration        // moving average of a task's time, as workers report it
	ended    uint64               // tasks ended, for the backstop's progress check
	wakes    uint64               // signals sent (read by tests)
	backstop *time.Timer          // armed while a wake was skipped and tasks wait
	armed    bool
	armedAt  uint64        // ended when the backstop was armed
	stale    int           // callbacks of backstop fires that were stopped too late, to ignore
	period   time.Duration // the backstop's period

	// Idle runs (see inline.go): the read loops that queue pulled messages run their
	// quick calls themselves when they run out of frames, instead of waking a worker.
	limit    int           // the most tasks running at once, idle runs included; 0: no limit
	idleAvg  time.Duration // idle runs take tasks while they take at most this on average
	deferred atomic.Bool   // a read loop queued tasks and left their wake to its idle run
	idleRuns int           // idle runs in progress
	idleDone chan struct{} // closed when idleRuns drops to 0; made by waitIdleRuns
	idleKits []*idleKit    // the state of idle runs not in progress, for reuse
}

const (
	// wakeBudget is how long the running workers may take to get through the queued
	// tasks before another worker is woken. A wake-up costs a few microseconds of CPU and
	// tens of microseconds of latency, and on a small machine shared with the broker it
	// wakes a thread on the core the broker needs: a pull's 32 quick calls (up to ~6 µs
	// each) are not worth one, longer ones are. (50 µs woke a worker for most pulls of
	// quick calls: 0.8 wake-ups per pull; 200 µs, 0.1, and 3–7 % less CPU per message
	// on real 4.9.8 and 5.3.3 brokers and in the realistic mode: see the README's
	// worker pool.)
	wakeBudget = 200 * time.Microsecond
	// quickCall is the longest a listener call, and twice the average, may take for the
	// calls to count as quick: a run goes on to the next call of its queue only after a
	// quick one (see taskWorker.more), and so does an idle run (see nextIdle).
	quickCall = 50 * time.Microsecond
	// wakeBackstop is how long tasks may wait with no task ending before the workers
	// are taken to be stuck in slow calls and another one is woken.
	wakeBackstop = time.Millisecond
	// wakeAvgStart is the average task time assumed before any task ended: high enough
	// that a first batch is spread over the workers, as a slow listener needs.
	wakeAvgStart = wakeBudget
)

// taskWorker is one worker's hold on a taskQueue. It times the tasks it ends (from
// waking up to the next wait, in samples of at most taskSample tasks) so the queue
// learns how long tasks take, with a clock reading per sample and around each wait
// instead of two per task.
type taskWorker struct {
	q       *taskQueue
	busy    bool          // it runs a task it took
	mark    time.Duration // q.clock(): when the tasks now counted in sampled began
	sampled int           // tasks ended since mark
	taken   int           // tasks an idle run took (see inline.go); counted by more too
	handOff func()        // an idle run's, until used: hands its read loop off (inline.go)
}

// taskSample is the most tasks a worker ends before it reports their average time.
const taskSample = 16

// lane is one queue's tasks, in order.
type lane struct {
	req   *pull.Request    // the queue's, for a pulled queue
	pop   *pull.PopRequest // the queue's, for a popped queue
	tasks taskRing
}

func newTaskQueue() *taskQueue {
	epoch := time.Now()
	q := &taskQueue{lanes: make(map[*pull.Request]*lane), pops: make(map[*pull.PopRequest]*lane),
		clock: func() time.Duration { return time.Since(epoch) }, avg: wakeAvgStart, period: wakeBackstop}
	q.cond.L = &q.mu
	q.backstop = time.AfterFunc(time.Hour, q.onBackstop)
	q.backstop.Stop()
	return q
}

// worker returns a new worker's hold on the queue.
func (q *taskQueue) worker() *taskWorker { return &taskWorker{q: q, mark: q.clock()} }

// wakeLocked wakes a waiting worker when the queued tasks need one: there is a worker
// to wake, and the workers running or already woken would take longer than wakeBudget
// to get through the queued tasks at the average task time. When it skips a wake that
// a waiting worker could take, it arms the backstop.
func (q *taskQueue) wakeLocked() (wake bool) {
	if q.n == 0 || q.waiting <= q.waking || q.atLimitLocked(q.waking) {
		return false
	}
	if capacity := q.active + q.waking; capacity == 0 || time.Duration(q.n)*q.avg > time.Duration(capacity)*wakeBudget {
		q.waking++
		q.wakes++
		return true
	}
	if !q.armed {
		q.armed, q.armedAt = true, q.ended
		q.backstop.Reset(q.period)
	}
	return false
}

// atLimitLocked reports whether the tasks running, and extra about to, reach the limit.
func (q *taskQueue) atLimitLocked(extra int) bool {
	return q.limit > 0 && q.active+extra >= q.limit
}

// onBackstop runs when tasks waited a backstop period after a wake was skipped. When no
// task ended in that period, the running tasks take at least that long: the average is
// raised to it, and the wake rule applied again.
func (q *taskQueue) onBackstop() {
	q.mu.Lock()
	if q.stale > 0 {
		q.stale-- // a fire of an arming that was stopped: the current one has its own
		q.mu.Unlock()
		return
	}
	if !q.armed || q.closed {
		q.mu.Unlock()
		return
	}
	q.armed = false
	// A read loop that left the wake to an idle run that has not come (its connection
	// closed, or it is reading a long burst of frames) gets it made now.
	q.deferred.Store(false)
	if q.ended == q.armedAt && q.active > 0 {
		q.avg = max(q.avg, q.period) // tasks ran all period and none ended: slow ones
	}
	q.wakeAndUnlock()
}

// pushBatches splits msgs into batches of at most size and queues them. It returns false
// when the queue is closed. With deferWake, the caller is a connection's read loop that
// runs idle work (see inline.go): instead of waking a worker, the queue leaves the wake
// to that loop's idle run, which comes as soon as the loop has handled the frames it has
// read (the backstop wakes a worker if it does not come). lease, when not nil, holds
// msgs' bodies: each batch queued takes a reference, which consume releases.
func (q *taskQueue) pushBatches(req *pull.Request, msgs []*message.Ext, size int, deferWake bool, lease *pull.Lease) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	lease.Acquire((len(msgs) + size - 1) / size)
	for i := 0; i < len(msgs); i += size {
		j := min(i+size, len(msgs))
		q.pushLocked(task{req: req, msgs: msgs[i:j:j], lease: lease})
	}
	if deferWake {
		q.deferred.Store(true)
		if !q.armed {
			q.armed, q.armedAt = true, q.ended
			q.backstop.Reset(q.period)
		}
		q.mu.Unlock()
		return true
	}
	q.wakeAndUnlock()
	return true
}

// pushPop splits a popped batch into listener calls of at most size messages and
// queues them. It returns false when the queue is closed.
func (q *taskQueue) pushPop(r *pull.PopRequest, b *processqueue.PopBatch, size int) bool {
	msgs := b.Msgs()
	pts := make([]popTask, (len(msgs)+size-1)/size)
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	for k := range pts {
		i := k * size
		j := min(i+size, len(msgs))
		pts[k] = popTask{r: r, batch: b, first: i}
		q.pushLocked(task{msgs: msgs[i:j:j], pop: &pts[k]})
	}
	q.wakeAndUnlock()
	return true
}

// push queues one task.
func (q *taskQueue) push(t task) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.pushLocked(t)
	q.wakeAndUnlock()
	return true
}

func (q *taskQueue) pushLocked(t task) {
	var l *lane
	if t.pop != nil {
		l = q.pops[t.pop.r]
	} else {
		l = q.lanes[t.req]
	}
	if l == nil {
		if k := len(q.free); k > 0 {
			l, q.free = q.free[k-1], q.free[:k-1]
		} else {
			l = &lane{}
		}
		if t.pop != nil {
			l.pop = t.pop.r
			q.pops[l.pop] = l
		} else {
			l.req = t.req
			q.lanes[t.req] = l
		}
		q.turn.push(l)
	}
	l.tasks.push(t)
	q.n++
}

// pop ends the worker's current task, if it runs one, and waits for the next; ok is
// false once the queue is closed. It takes the next task of the lane whose turn it is
// and sends that lane to the back of the line, or retires it when it is empty. When
// tasks are left that the running workers would take too long to get through, it
// wakes another worker (see wakeLocked).
func (w *taskWorker) pop() (t task, ok bool) {
	q := w.q
	q.mu.Lock()
	w.endTaskLocked()
	if w.sampled > 0 && q.n == 0 {
		w.sampleLocked()
	}
	if q.n == 0 || q.atLimitLocked(0) {
		for (q.n == 0 || q.atLimitLocked(0)) && !q.closed {
			q.waiting++
			q.cond.Wait()
			q.waiting--
			if q.waking > 0 {
				q.waking--
			}
		}
		w.mark = q.clock()
	}
	if q.closed {
		q.mu.Unlock()
		return task{}, false
	}
	return w.takeAndUnlock(), true
}

// endTaskLocked ends the worker's current task, if it runs one.
func (w *taskWorker) endTaskLocked() {
	if w.busy {
		w.busy = false
		w.q.active--
		w.endLocked()
	}
}

// takeAndUnlock takes the next task for the worker (see takeLocked) and unlocks the
// queue, waking another worker if the tasks left need one.
func (w *taskWorker) takeAndUnlock() task {
	q := w.q
	t := q.takeLocked()
	w.busy = true
	q.active++
	wake := q.takenLocked()
	q.mu.Unlock()
	if wake {
		q.cond.Signal()
	}
	return t
}

// wakeAndUnlock unlocks the queue, waking a worker if the queued tasks need one.
func (q *taskQueue) wakeAndUnlock() {
	wake := q.wakeLocked()
	q.mu.Unlock()
	if wake {
		q.cond.Signal() // the worker it wakes wakes the next one if needed (see pop)
	}
}

// frontLocked returns the lane whose turn it is, retiring the lanes that more emptied
// before it; there must be a task queued.
func (q *taskQueue) frontLocked() *lane {
	for {
		l := q.turn.buf[q.turn.head]
		if l.tasks.n > 0 {
			return l
		}
		q.retireLocked(q.turn.pop()) // emptied by more: retired when its turn comes
	}
}

// takeLocked takes the next task of the lane whose turn it is and sends that lane to the
// back of the line, or retires it when it is empty; there must be a task queued.
func (q *taskQueue) takeLocked() task {
	q.frontLocked()
	l := q.turn.pop()
	t := l.tasks.pop()
	if l.tasks.n > 0 {
		q.turn.push(l)
	} else {
		q.retireLocked(l)
	}
	return t
}

// more ends the worker's current task, a quick one of r's that took took, and takes the
// next task of r's lane when the worker should run it right away, as the next call of a
// run (see concurrentService.consume): the next task is quick too, tasks are quick
// on average (two take no longer than quickCall), the last took no longer than
// quickCall, and the run has not reached maxRun tasks (so the other queues' tasks
// wait for at most that many quick calls). The tasks left stay queued, where any
// worker may take them.
func (w *taskWorker) more(r *pull.Request, took time.Duration, run int) (t task, ok bool) {
	q := w.q
	q.mu.Lock()
	w.endLocked()
	l := q.lanes[r]
	if q.closed || run >= maxRun || took > quickCall || 2*q.avg > quickCall ||
		l == nil || l.tasks.n == 0 || !quick(l.tasks.peek()) {
		w.busy = false // the task is ended: pop must not end it again
		q.active--
		q.mu.Unlock()
		return task{}, false
	}
	t = l.tasks.pop() // an emptied lane stays in the turn ring until pop retires it
	w.taken++
	wake := q.takenLocked()
	q.mu.Unlock()
	if wake {
		q.cond.Signal()
	}
	return t, true
}

// maxRun is the most tasks of one queue a worker runs one after another before it takes
// the next queue's turn: a pull's messages at the default batch sizes.
const maxRun = 32

// endLocked counts a task of the worker as ended, and reports the average time of its
// tasks every taskSample tasks.
func (w *taskWorker) endLocked() {
	w.q.ended++
	if w.sampled++; w.sampled >= taskSample {
		w.sampleLocked()
	}
}

// sampleLocked folds the average time of the tasks ended since mark into the queue's.
func (w *taskWorker) sampleLocked() {
	q := w.q
	now := q.clock()
	q.avg += ((now-w.mark)/time.Duration(w.sampled) - q.avg) / 4
	w.mark, w.sampled = now, 0
}

// takenLocked accounts for a task taken: it wakes another worker if the tasks left need
// one, and stops the backstop once none is left.
func (q *taskQueue) takenLocked() (wake bool) {
	q.n--
	wake = q.wakeLocked()
	if q.n == 0 && q.armed {
		q.armed = false
		if !q.backstop.Stop() {
			q.stale++ // it fired: its callback is on its way
		}
	}
	return wake
}

// retireLocked takes an empty lane out of the map, for reuse.
func (q *taskQueue) retireLocked(l *lane) {
	if l.pop != nil {
		delete(q.pops, l.pop)
	} else {
		delete(q.lanes, l.req)
	}
	l.req, l.pop = nil, nil
	q.free = append(q.free, l)
}

// quick reports whether t may be run with others of its lane: a concurrent consumer's
// listener call on pulled messages.
func quick(t task) bool { return t.pop == nil && len(t.msgs) > 0 }

// close wakes every worker and drops the queued tasks: their pulled messages stay in
// their ProcessQueues, so their offsets are never committed past them. It returns the
// dropped POP tasks, whose messages the caller abandons.
func (q *taskQueue) close() (pops []task) {
	q.mu.Lock()
	q.closed = true
	q.armed = false
	q.backstop.Stop() // a callback on its way finds the queue closed
	for _, l := range q.pops {
		for l.tasks.n > 0 {
			pops = append(pops, l.tasks.pop())
		}
	}
	q.lanes, q.pops, q.turn, q.free, q.n = nil, nil, laneRing{}, nil, 0
	q.mu.Unlock()
	q.cond.Broadcast()
	return pops
}

// len returns the number of queued tasks.
func (q *taskQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// taskRing is a growable ring of tasks.
type taskRing struct {
	buf     []task
	head, n int
}

func (r *taskRing) push(t task) {
	if r.n == len(r.buf) {
		grown := make([]task, max(8, 2*len(r.buf)))
		for k := 0; k < r.n; k++ {
			grown[k] = r.buf[(r.head+k)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = t
	r.n++
}

func (r *taskRing) peek() task { return r.buf[r.head] }

func (r *taskRing) pop() task {
	t := r.buf[r.head]
	r.buf[r.head] = task{}
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return t
}

// laneRing is a growable ring of lanes.
type laneRing struct {
	buf     []*lane
	head, n int
}

func (r *laneRing) push(l *lane) {
	if r.n == len(r.buf) {
		grown := make([]*lane, max(8, 2*len(r.buf)))
		for k := 0; k < r.n; k++ {
			grown[k] = r.buf[(r.head+k)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = l
	r.n++
}

func (r *laneRing) pop() *lane {
	l := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return l
}
