// Command benchlent is the benchmark's worker for rmqpush lending bodies to its listener
// (consumer.WithLentBodies): one push consumer whose listener only counts. It is started
// by cmd/bench as client "lent"; see package benchkit for its flags and output.
package main

import (
	"os"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
	"github.com/rmqpush/rmqpush/test/conformance/internal/rmqworker"
)

func main() {
	w := &rmqworker.Client{Extra: []consumer.Option{consumer.WithLentBodies()}}
	os.Exit(benchkit.Main("rmqpush-lent", w, os.Args[1:], os.Stdout, os.Stderr))
}
