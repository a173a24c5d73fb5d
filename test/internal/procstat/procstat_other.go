//go:build !linux

package procstat

import "time"

// RSS is not measured on this system.
func RSS(int) int64 { return 0 }

// Sockets is not measured on this system.
func Sockets(int) int { return 0 }

// CPUTime is not measured on this system.
func CPUTime() time.Duration { return 0 }
