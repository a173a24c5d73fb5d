// Command benchorderlylent is the benchmark's worker for rmqpush consuming in order and
// lending bodies to its listener (consumer.WithLentBodies): one push consumer with an
// OrderlyListener that only counts. It is started by cmd/bench as client "orderly-lent";
// see package benchkit for its flags and output.
package main

import (
	"os"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
	"github.com/rmqpush/rmqpush/test/conformance/internal/rmqworker"
)

func main() {
	w := &rmqworker.Client{Orderly: true, Extra: []consumer.Option{consumer.WithLentBodies()}}
	os.Exit(benchkit.Main("rmqpush-orderly-lent", w, os.Args[1:], os.Stdout, os.Stderr))
}
