package main

import (
	"fmt"
	"os"
	"runtime"
	"time"
)

// sampler writes a stats line every interval:
//
//	<unixNanos> goroutines=<n> heap=<live heap bytes after a GC> handled=<messages>
//
// It forces a GC before reading the heap so that the figure is the live heap, not
// garbage waiting for collection.
type sampler struct {
	f    *os.File
	done chan struct{}
	quit chan struct{}
}

func startSampler(path string, every time.Duration, handled func() int64) (*sampler, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	s := &sampler{f: f, done: make(chan struct{}), quit: make(chan struct{})}
	go s.loop(every, handled)
	return s, nil
}

func (s *sampler) loop(every time.Duration, handled func() int64) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	var ms runtime.MemStats
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(s.f, "%d goroutines=%d heap=%d handled=%d\n",
			time.Now().UnixNano(), runtime.NumGoroutine(), ms.HeapAlloc, handled())
	}
}

// stop ends the loop and closes the file.
func (s *sampler) stop() {
	close(s.quit)
	<-s.done
	_ = s.f.Close()
}
