package consumer

import (
	"sync"

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
// Workers are woken one at a time: a push wakes one waiting worker, and a worker that
// pops a task while more are queued wakes the next. With quick listeners the few
// workers the CPUs can run drain the queue and the others sleep on, instead of every
// idle worker being woken for every pull (a broadcast per pull of 32 messages) only to
// find the queue drained; with slow listeners the chain wakes every worker there is
// work for, one hand-off after another.
type taskQueue struct {
	mu      sync.Mutex
	cond    sync.Cond
	lanes   map[*pull.Request]*lane
	pops    map[*pull.PopRequest]*lane // the lanes of POP queues
	turn    laneRing                   // lanes with tasks, in the order they are served
	free    []*lane                    // empty lanes to reuse
	n       int                        // tasks queued in all lanes
	waiting int                        // workers in cond.Wait
	closed  bool
}

// lane is one queue's tasks, in order.
type lane struct {
	req   *pull.Request    // the queue's, for a pulled queue
	pop   *pull.PopRequest // the queue's, for a popped queue
	tasks taskRing
}

func newTaskQueue() *taskQueue {
	q := &taskQueue{lanes: make(map[*pull.Request]*lane), pops: make(map[*pull.PopRequest]*lane)}
	q.cond.L = &q.mu
	return q
}

// pushBatches splits msgs into batches of at most size and queues them. It returns false
// when the queue is closed.
func (q *taskQueue) pushBatches(req *pull.Request, msgs []*message.Ext, size int) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	for i := 0; i < len(msgs); i += size {
		j := min(i+size, len(msgs))
		q.pushLocked(task{req: req, msgs: msgs[i:j:j]})
	}
	wake := q.waiting > 0 && len(msgs) > 0
	q.mu.Unlock()
	if wake {
		q.cond.Signal() // the worker it wakes wakes the next one (see pop)
	}
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
	wake := q.waiting > 0 && len(msgs) > 0
	q.mu.Unlock()
	if wake {
		q.cond.Signal()
	}
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
	wake := q.waiting > 0
	q.mu.Unlock()
	if wake {
		q.cond.Signal()
	}
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

// pop waits for a task; ok is false once the queue is closed. It takes the next task of
// the lane whose turn it is and sends that lane to the back of the line, or retires it
// when it is empty. When tasks are left and another worker waits, it wakes that worker.
func (q *taskQueue) pop() (t task, ok bool) {
	q.mu.Lock()
	for q.n == 0 && !q.closed {
		q.waiting++
		q.cond.Wait()
		q.waiting--
	}
	if q.closed {
		q.mu.Unlock()
		return task{}, false
	}
	l := q.turn.pop()
	t = l.tasks.pop()
	if l.tasks.n > 0 {
		q.turn.push(l)
	} else {
		if l.pop != nil {
			delete(q.pops, l.pop)
		} else {
			delete(q.lanes, l.req)
		}
		l.req, l.pop = nil, nil
		q.free = append(q.free, l)
	}
	q.n--
	wake := q.n > 0 && q.waiting > 0
	q.mu.Unlock()
	if wake {
		q.cond.Signal()
	}
	return t, true
}

// close wakes every worker and drops the queued tasks: their pulled messages stay in
// their ProcessQueues, so their offsets are never committed past them. It returns the
// dropped POP tasks, whose messages the caller abandons.
func (q *taskQueue) close() (pops []task) {
	q.mu.Lock()
	q.closed = true
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
