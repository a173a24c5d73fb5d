// Command benchburn keeps one CPU core busy until it is interrupted or killed: the
// benchmark's realistic mode runs it beside the fake broker and the client, as a real
// broker's JVM keeps a core of a small machine busy (cmd/bench -realistic).
package main

import (
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
)

func main() {
	runtime.GOMAXPROCS(2) // the spinning goroutine and the signal wait
	var stop atomic.Bool
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		stop.Store(true)
	}()
	x := uint64(1)
	for !stop.Load() {
		for range 1 << 16 { // xorshift: work the compiler cannot drop
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	if x == 0 {
		os.Exit(1)
	}
}
