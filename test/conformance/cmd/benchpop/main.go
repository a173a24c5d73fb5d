// Command benchpop is the benchmark's worker for rmqpush consuming by POP (RocketMQ 5,
// WithClientRebalance(false), the group set to POP by cmd/bench before it starts): one
// push consumer whose listener only counts. It is started by cmd/bench as client "pop";
// see package benchkit for its flags and output.
package main

import (
	"os"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
	"github.com/rmqpush/rmqpush/test/conformance/internal/rmqworker"
)

func main() {
	os.Exit(benchkit.Main("rmqpush-pop", &rmqworker.Client{Pop: true}, os.Args[1:], os.Stdout, os.Stderr))
}
