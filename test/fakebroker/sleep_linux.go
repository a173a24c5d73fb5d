package fakebroker

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling goroutine's thread for d with nanosleep, which wakes
// within tens of microseconds, where a Go timer may wake a millisecond late.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // interrupted early: the caller re-checks the clock
}
