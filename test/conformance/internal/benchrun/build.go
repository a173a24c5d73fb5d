package benchrun

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Programs the orchestrator runs, by binary name.
const (
	binFake    = "fakebroker"
	binRMQPush = "benchrmqpush"
	binPop     = "benchpop"
	binLent    = "benchlent"
	binPeer    = "benchpeer"
	binRaw     = "benchraw"
	binBurn    = "benchburn"
)

var buildPackages = []string{
	"github.com/rmqpush/rmqpush/test/fakebroker/cmd/fakebroker",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchrmqpush",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchpop",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchlent",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchpeer",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchraw",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchburn",
}

// build builds the programs into dir (go build -o dir/ ...), without the race detector
// whatever the caller runs under: the workers' figures must be their own.
func build(ctx context.Context, dir string) error {
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, buildPackages...)
	cmd := exec.CommandContext(ctx, "go", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("benchrun: go build (run from inside test/conformance): %v\n%s", err, out)
	}
	return nil
}

// workerBin returns the worker program of client.
func (r *runner) workerBin(client string) string {
	if bin, ok := r.cfg.Workers[client]; ok {
		return bin
	}
	dir := r.bin
	switch client {
	case "rmqpush":
		return filepath.Join(dir, binRMQPush)
	case clientPop:
		return filepath.Join(dir, binPop)
	case clientLent:
		return filepath.Join(dir, binLent)
	case "peer":
		return filepath.Join(dir, binPeer)
	default:
		return filepath.Join(dir, binRaw)
	}
}
