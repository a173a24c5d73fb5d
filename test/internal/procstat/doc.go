// Package procstat reads what the test harnesses sample of a process: its resident set
// size, its open sockets and its CPU time. On systems other than Linux the figures are 0.
package procstat
