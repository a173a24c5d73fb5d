//go:build !linux

package fakebroker

import "time"

// preciseSleep sleeps for d; off Linux it is a plain time.Sleep.
func preciseSleep(d time.Duration) { time.Sleep(d) }
