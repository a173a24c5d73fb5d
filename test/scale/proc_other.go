//go:build !linux

package scale

import "time"

// cpuTime is not measured on this system.
func cpuTime() time.Duration { return 0 }

// rss is not measured on this system.
func rss() int64 { return 0 }
