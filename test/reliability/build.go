package reliability

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Import paths of the programs the suite runs.
const (
	fakeBrokerPkg = "github.com/rmqpush/rmqpush/test/fakebroker/cmd/fakebroker"
	consumerPkg   = "github.com/rmqpush/rmqpush/test/reliability/cmd/relconsumer"
)

// Binaries are the paths of the programs the suite runs.
type Binaries struct {
	FakeBroker string // test/fakebroker/cmd/fakebroker
	Consumer   string // test/reliability/cmd/relconsumer
}

// Build compiles the fake broker's command and the consumer process into dir with
// `go build` (no race detector: the processes must keep up with the scenarios on a
// small machine). The working directory must be inside the rmqpush module.
func Build(ctx context.Context, dir string) (Binaries, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return Binaries{}, fmt.Errorf("reliability: the go command is needed to build the programs: %w", err)
	}
	bins := Binaries{FakeBroker: filepath.Join(dir, "fakebroker"), Consumer: filepath.Join(dir, "relconsumer")}
	for _, b := range []struct{ out, pkg string }{{bins.FakeBroker, fakeBrokerPkg}, {bins.Consumer, consumerPkg}} {
		cmd := exec.CommandContext(ctx, goTool, "build", "-o", b.out, b.pkg)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return Binaries{}, fmt.Errorf("reliability: go build %s: %w\n%s", b.pkg, err, out.String())
		}
	}
	return bins, nil
}
