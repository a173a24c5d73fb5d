package client

import "runtime"

// maxGoroutineDump bounds the goroutine dump of a running-info answer, well under the
// frame limit.
const maxGoroutineDump = 4 << 20

// goroutineDump returns the stacks of every goroutine of the process (what Java's
// running info carries as its jstack), cut at maxGoroutineDump.
func goroutineDump() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		if len(buf) >= maxGoroutineDump {
			return string(buf[:n]) + "\n... (the rest cut: the dump is limited to 4 MiB)\n"
		}
		buf = make([]byte, 2*len(buf))
	}
}
