package benchrun

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Programs the orchestrator runs, by binary name, besides the clients' workers.
const (
	binFake = "fakebroker"
	binRaw  = "benchraw"
	binBurn = "benchburn"
)

// clientBins are the built-in clients' worker programs by client name (see
// Config.Clients).
var clientBins = map[string]string{
	"rmqpush":      "benchrmqpush",
	clientPop:      "benchpop",
	"pop-lent":     "benchpoplent",
	"lent":         "benchlent",
	"orderly":      "benchorderly",
	"orderly-lent": "benchorderlylent",
	"peer":         "benchpeer",
}

var buildPackages = []string{
	"github.com/rmqpush/rmqpush/test/fakebroker/cmd/fakebroker",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchrmqpush",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchpop",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchpoplent",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchlent",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchorderly",
	"github.com/rmqpush/rmqpush/test/conformance/cmd/benchorderlylent",
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
	if bin, ok := clientBins[client]; ok {
		return filepath.Join(r.bin, bin)
	}
	return filepath.Join(r.bin, binRaw)
}
