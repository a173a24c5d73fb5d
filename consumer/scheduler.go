package consumer

import (
	"container/heap"
	"sync"
	"time"
)

// scheduler is a timer goroutine: it runs functions at a given time and periodic jobs,
// on its goroutine, one at a time. The consumer has two: one for short jobs (delayed
// re-consumption, the consume-timeout check, statistics), one for jobs that wait on
// brokers (offset writes), so a slow broker cannot delay the short ones; an orderly
// clustering consumer has a third for lock renewal, which must not wait behind writes.
type scheduler struct {
	mu    sync.Mutex
	jobs  jobHeap
	seq   uint64
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	start sync.Once
	once  sync.Once
}

func newScheduler() *scheduler {
	return &scheduler{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// after runs fn once, d from now.
func (s *scheduler) after(d time.Duration, fn func()) { s.add(time.Now().Add(d), 0, fn) }

// every runs fn every d, the first time d from now.
func (s *scheduler) every(d time.Duration, fn func()) { s.add(time.Now().Add(d), d, fn) }

func (s *scheduler) add(due time.Time, period time.Duration, fn func()) {
	s.mu.Lock()
	s.seq++
	heap.Push(&s.jobs, job{due: due, seq: s.seq, period: period, fn: fn})
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *scheduler) run() {
	s.start.Do(func() { go s.loop() })
}

// close stops the goroutine and waits for it; jobs not yet due are dropped.
func (s *scheduler) close() {
	s.once.Do(func() { close(s.stop) })
	s.start.Do(func() { close(s.done) })
	<-s.done
}

func (s *scheduler) loop() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		var due []job
		s.mu.Lock()
		for len(s.jobs) > 0 && !s.jobs[0].due.After(now) {
			due = append(due, heap.Pop(&s.jobs).(job))
		}
		next := time.Duration(-1)
		if len(s.jobs) > 0 {
			next = s.jobs[0].due.Sub(now)
		}
		s.mu.Unlock()
		for _, j := range due {
			select {
			case <-s.stop:
				return
			default:
			}
			j.fn()
			if j.period > 0 {
				s.add(time.Now().Add(j.period), j.period, j.fn)
			}
		}
		if len(due) > 0 {
			continue // jobs may have come due while these ran
		}
		if next >= 0 {
			timer.Reset(next)
		} else {
			timer.Stop()
		}
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

type job struct {
	due    time.Time
	seq    uint64
	period time.Duration
	fn     func()
}

type jobHeap []job

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(i, j int) bool {
	if h[i].due.Equal(h[j].due) {
		return h[i].seq < h[j].seq
	}
	return h[i].due.Before(h[j].due)
}
func (h jobHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *jobHeap) Push(x any)   { *h = append(*h, x.(job)) }
func (h *jobHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = job{}
	*h = old[:len(old)-1]
	return x
}
