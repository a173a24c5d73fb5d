package fakebroker

import (
	"container/heap"
	"sync"
	"time"
)

// scheduler runs delayed work for a Cluster on one goroutine: long-poll timeouts, delay
// level deliveries, client expiry scans, delayed requests of faults. Callbacks run one
// at a time on that goroutine, so they must not block; they may take a broker's mutex.
// The scheduler is the only timer the Cluster owns, so stopping it is all it takes to
// leave no timer goroutine behind.
type scheduler struct {
	mu      sync.Mutex
	tasks   taskHeap
	seq     uint64
	stopped bool
	wake    chan struct{} // buffered, 1
	done    chan struct{}
	exited  chan struct{}
}

// Below coarseTimer the scheduler does not trust a timer to wake it on time.
const coarseTimer = 2 * time.Millisecond

// task is one scheduled callback.
type task struct {
	at    time.Time
	seq   uint64 // ties run in scheduling order
	fn    func()
	index int // in the heap; -1 once removed
}

func newScheduler() *scheduler {
	s := &scheduler{
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	go s.run()
	return s
}

// after schedules fn to run d from now (at once if d ≤ 0). It returns nil, and never
// runs fn, once the scheduler is stopped.
func (s *scheduler) after(d time.Duration, fn func()) *task {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.seq++
	t := &task{at: time.Now().Add(d), seq: s.seq, fn: fn}
	heap.Push(&s.tasks, t)
	if t.index == 0 {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return t
}

// cancel removes t if it has not run yet and reports whether it did. A nil t is fine.
func (s *scheduler) cancel(t *task) bool {
	if t == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&s.tasks, t.index)
	return true
}

// stop ends the goroutine and drops every task; a callback running now finishes first.
func (s *scheduler) stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		<-s.exited
		return
	}
	s.stopped = true
	for _, t := range s.tasks {
		t.index = -1
	}
	s.tasks = nil
	s.mu.Unlock()
	close(s.done)
	<-s.exited
}

func (s *scheduler) run() {
	defer close(s.exited)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		var next *task
		now := time.Now()
		if len(s.tasks) > 0 && !s.tasks[0].at.After(now) {
			next = heap.Pop(&s.tasks).(*task)
		}
		wait := time.Hour
		if next == nil && len(s.tasks) > 0 {
			wait = s.tasks[0].at.Sub(now)
		}
		s.mu.Unlock()
		if next != nil {
			next.fn()
			continue
		}
		if wait < coarseTimer {
			// Go's timers fire about a millisecond late when the process is otherwise
			// idle (the poller waits in whole milliseconds): a 300 µs pull service time
			// would take 1.1 ms. Sleep precisely instead; a task scheduled meanwhile
			// waits for the end of the sleep (at most coarseTimer), and so does stop.
			preciseSleep(wait)
			select {
			case <-s.done:
				return
			default:
			}
			continue
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-s.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		case <-s.done:
			return
		}
	}
}

// taskHeap orders tasks by time, then by scheduling order.
type taskHeap []*task

func (h taskHeap) Len() int { return len(h) }
func (h taskHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}
func (h taskHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *taskHeap) Push(x any) {
	t := x.(*task)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *taskHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}
