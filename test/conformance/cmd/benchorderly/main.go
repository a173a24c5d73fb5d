// Command benchorderly is the benchmark's worker for rmqpush consuming in order: one push
// consumer with an OrderlyListener that only counts. It is started by cmd/bench as client
// "orderly"; see package benchkit for its flags and output.
package main

import (
	"os"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
	"github.com/rmqpush/rmqpush/test/conformance/internal/rmqworker"
)

func main() {
	os.Exit(benchkit.Main("rmqpush-orderly", &rmqworker.Client{Orderly: true}, os.Args[1:], os.Stdout, os.Stderr))
}
