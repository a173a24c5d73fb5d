package consumer

import (
	"context"
	"sync"
)

// workerGroup runs a fixed pool of worker goroutines and lets their owner wait for them
// within a context, without an extra goroutine: the last worker to end closes done.
type workerGroup struct {
	mu      sync.Mutex
	running int
	done    chan struct{}
}

// start launches n goroutines running fn.
func (g *workerGroup) start(n int, fn func()) {
	g.mu.Lock()
	g.running = n
	g.done = make(chan struct{})
	g.mu.Unlock()
	for range n {
		go func() {
			defer g.exit()
			fn()
		}()
	}
}

func (g *workerGroup) exit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running--; g.running == 0 {
		close(g.done)
	}
}

// wait returns when every worker ended, or with ctx's error when ctx ends first.
func (g *workerGroup) wait(ctx context.Context) error {
	g.mu.Lock()
	done := g.done
	g.mu.Unlock()
	if done == nil {
		return nil // never started
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
