// Command benchrmqpush is the benchmark's worker for rmqpush: one push consumer whose
// listener only counts (and, in latency mode, reads the send time from each body). It
// is started by cmd/bench; see package benchkit for its flags and output.
package main

import (
	"os"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
	"github.com/rmqpush/rmqpush/test/conformance/internal/rmqworker"
)

func main() {
	os.Exit(benchkit.Main("rmqpush", &rmqworker.Client{}, os.Args[1:], os.Stdout, os.Stderr))
}
