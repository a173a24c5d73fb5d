// Package benchkit is what the benchmark's worker programs share (cmd/benchrmqpush,
// cmd/benchpeer, cmd/benchraw): their flags, the sink their listeners report to, the
// measurements each takes of its own process (getrusage RUSAGE_SELF, runtime memory
// statistics, sampled goroutine counts) and the line protocol by which the orchestrator
// (cmd/bench, package benchrun) drives them.
//
// A worker writes these lines to its standard output, and nothing else:
//
//	ready                 the client started (consumer Start returned)
//	window-start          idle mode: the measured window begins
//	window-end            idle mode: the measured window ended
//	result {json}         the Result, last
//
// Each worker measures inside its own process, around the phase being measured, so
// its figures are its own: CPU is the user+sys delta of getrusage(RUSAGE_SELF), peak
// RSS is VmHWM of /proc/self/status (not ru_maxrss, which Linux carries over from the
// parent across execve), goroutines are sampled every 10 ms by one goroutine of the kit
// (not counted).
package benchkit
