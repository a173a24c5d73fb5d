// Command benchpoplent is the benchmark's worker for rmqpush consuming by POP and
// lending bodies to its listener (consumer.WithLentBodies): one push consumer whose
// listener only counts. It is started by cmd/bench as client "pop-lent"; see package
// benchkit for its flags and output.
package main

import (
	"os"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
	"github.com/rmqpush/rmqpush/test/conformance/internal/rmqworker"
)

func main() {
	w := &rmqworker.Client{Pop: true, Extra: []consumer.Option{consumer.WithLentBodies()}}
	os.Exit(benchkit.Main("rmqpush-pop-lent", w, os.Args[1:], os.Stdout, os.Stderr))
}
