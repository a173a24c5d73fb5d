//go:build !linux

package reliability

// procRSS is not measured on this system.
func procRSS(int) int64 { return 0 }

// procSockets is not measured on this system.
func procSockets(int) int { return 0 }
