package reliability

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScenarios runs the CI version of scenarios A–H with real processes: about three
// minutes on two cores. The child processes are built without the race detector.
func TestScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("the reliability scenarios take about three minutes; not run with -short")
	}
	ctx := context.Background()
	dir := t.TempDir()
	start := time.Now()
	bins, err := Build(ctx, dir)
	require.NoError(t, err)
	t.Logf("built the fake broker and the consumer in %v", time.Since(start).Round(time.Millisecond))
	cfg := Config{Bins: bins, Dir: dir, Progress: testWriter{t}}
	for _, letter := range Scenarios() {
		t.Run(letter, func(t *testing.T) {
			cfg.Progress = testWriter{t}
			res, err := Run(ctx, cfg, letter)
			var table strings.Builder
			require.NoError(t, WriteTable(&table, []Result{res}))
			t.Logf("\n%s", table.String())
			require.NoError(t, err)
			checkTargets(t, res)
		})
	}
}

// checkTargets fails the test on every target of res not met.
func checkTargets(t *testing.T, res Result) {
	t.Helper()
	require.NotEmpty(t, res.Targets)
	for _, tg := range res.Targets {
		if !tg.Met {
			t.Errorf("target %q not met: %s", res.Scenario+"/"+tg.Name, tg.Detail)
		}
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
