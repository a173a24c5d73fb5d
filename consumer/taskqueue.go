package consumer

import (
	"sync"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/pull"
)

// task is work for a consume worker: for concurrent consumption, one listener call on
// a batch of one queue's messages; for orderly consumption, the queue's task (msgs nil),
// which consumes the queue batch by batch, or tries to lock it first (relock).
type task struct {
	req     *pull.Request
	msgs    []*message.Ext
	relock  bool // orderly: lock the queue first
	expired bool // concurrent: msgs are past the consume timeout; send them back
}

// taskQueue feeds the consume workers. It is a growable ring of task values, so queuing
// a batch allocates nothing once the ring is big enough; pushing never blocks (memory
// is bounded by the pull service's flow control), popping waits for work.
type taskQueue struct {
	mu     sync.Mutex
	cond   sync.Cond
	ring   []task
	head   int
	n      int
	closed bool
}

func newTaskQueue() *taskQueue {
	q := &taskQueue{ring: make([]task, 64)}
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
	added := 0
	for i := 0; i < len(msgs); i += size {
		j := min(i+size, len(msgs))
		q.pushLocked(task{req: req, msgs: msgs[i:j:j]})
		added++
	}
	q.mu.Unlock()
	if added == 1 {
		q.cond.Signal()
	} else if added > 1 {
		q.cond.Broadcast()
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
	q.mu.Unlock()
	q.cond.Signal()
	return true
}

func (q *taskQueue) pushLocked(t task) {
	if q.n == len(q.ring) {
		grown := make([]task, 2*len(q.ring))
		for k := 0; k < q.n; k++ {
			grown[k] = q.ring[(q.head+k)%len(q.ring)]
		}
		q.ring, q.head = grown, 0
	}
	q.ring[(q.head+q.n)%len(q.ring)] = t
	q.n++
}

// pop waits for a task; ok is false once the queue is closed.
func (q *taskQueue) pop() (t task, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return task{}, false
	}
	t = q.ring[q.head]
	q.ring[q.head] = task{}
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	return t, true
}

// close wakes every worker and drops the queued tasks: their messages stay in their
// ProcessQueues, so their offsets are never committed past them.
func (q *taskQueue) close() {
	q.mu.Lock()
	q.closed = true
	clear(q.ring)
	q.n = 0
	q.mu.Unlock()
	q.cond.Broadcast()
}

// len returns the number of queued tasks.
func (q *taskQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}
