package benchkit

import (
	"runtime"
	"sync"
	"time"
)

// Sampler samples the number of goroutines every interval, not counting its own.
type Sampler struct {
	mu      sync.Mutex
	peak    int
	sum     int64
	samples int64
	stop    chan struct{}
	done    chan struct{}
}

// StartSampler starts sampling every interval.
func StartSampler(interval time.Duration) *Sampler {
	s := &Sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go s.run(interval)
	return s
}

func (s *Sampler) run(interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.sample()
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

func (s *Sampler) sample() {
	n := runtime.NumGoroutine() - 1 // the sampler itself
	s.mu.Lock()
	s.peak = max(s.peak, n)
	s.sum += int64(n)
	s.samples++
	s.mu.Unlock()
}

// Reset forgets the samples so far (the idle window starts).
func (s *Sampler) Reset() {
	s.mu.Lock()
	s.peak, s.sum, s.samples = 0, 0, 0
	s.mu.Unlock()
}

// Stats returns the peak and the mean since the start or the last Reset.
func (s *Sampler) Stats() (peak int, mean float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.samples > 0 {
		mean = float64(s.sum) / float64(s.samples)
	}
	return s.peak, mean
}

// Stop ends the sampling goroutine.
func (s *Sampler) Stop() {
	close(s.stop)
	<-s.done
}
