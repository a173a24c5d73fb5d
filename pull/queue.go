package pull

import (
	"container/heap"
	"sync"
	"time"
)

// requestQueue is the service's input: requests ready now in FIFO order, and requests
// waiting for a time in a heap. Adding never blocks; the service goroutine waits on
// ready for a signal.
type requestQueue[R any] struct {
	mu      sync.Mutex
	now     []R
	later   delayHeap[R]
	closed  bool
	ready   chan struct{} // capacity 1: "something changed"
	counter uint64        // orders equal deadlines by insertion
}

func newRequestQueue[R any]() *requestQueue[R] {
	return &requestQueue[R]{ready: make(chan struct{}, 1)}
}

// add queues r to be pulled now. It returns false when the queue is closed.
func (q *requestQueue[R]) add(r R) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.now = append(q.now, r)
	q.mu.Unlock()
	q.signal()
	return true
}

// addLater queues r to be pulled at due.
func (q *requestQueue[R]) addLater(r R, due time.Time) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.counter++
	heap.Push(&q.later, delayed[R]{due: due, seq: q.counter, r: r})
	q.mu.Unlock()
	q.signal()
	return true
}

func (q *requestQueue[R]) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take moves the requests that are due into buf and returns it, with the time the
// next delayed request is due (zero when none waits).
func (q *requestQueue[R]) take(buf []R, now time.Time) ([]R, time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	buf = append(buf, q.now...)
	clear(q.now)
	q.now = q.now[:0]
	for len(q.later) > 0 && !q.later[0].due.After(now) {
		buf = append(buf, heap.Pop(&q.later).(delayed[R]).r)
	}
	var next time.Time
	if len(q.later) > 0 {
		next = q.later[0].due
	}
	return buf, next
}

// serve is a service goroutine's loop: it hands each request to handle when it is due,
// one at a time, and otherwise waits for a signal on ready or for one timer set to the
// next delayed request, until stopped is closed.
func (q *requestQueue[R]) serve(stopped <-chan struct{}, handle func(R)) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var batch []R
	var none R
	for {
		var next time.Time
		batch, next = q.take(batch[:0], time.Now())
		for i, r := range batch {
			batch[i] = none // the buffer must not keep a dropped request alive
			if isClosed(stopped) {
				return
			}
			handle(r)
		}
		if !next.IsZero() {
			timer.Reset(time.Until(next))
		}
		select {
		case <-stopped:
			return
		case <-q.ready:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// close refuses further requests and drops the queued ones.
func (q *requestQueue[R]) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.now, q.later = nil, nil
}

// len returns the number of queued requests (tests and stats).
func (q *requestQueue[R]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.now) + len(q.later)
}

type delayed[R any] struct {
	due time.Time
	seq uint64
	r   R
}

type delayHeap[R any] []delayed[R]

func (h delayHeap[R]) Len() int { return len(h) }
func (h delayHeap[R]) Less(i, j int) bool {
	if h[i].due.Equal(h[j].due) {
		return h[i].seq < h[j].seq
	}
	return h[i].due.Before(h[j].due)
}
func (h delayHeap[R]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *delayHeap[R]) Push(x any)   { *h = append(*h, x.(delayed[R])) }
func (h *delayHeap[R]) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = delayed[R]{}
	*h = old[:len(old)-1]
	return x
}
