package reliability

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// strictEnv makes TestScenarios fail on the targets knownUnmet lists, instead of
// skipping with their figures.
const strictEnv = "RMQPUSH_RELIABILITY_STRICT"

// knownUnmet returns the targets the library cannot meet yet ("<scenario>/<target
// name>"), with why. TestScenarios reports them with t.Skip and the figures measured;
// every other target is asserted. README.md, "Known failures", has the evidence.
func knownUnmet() map[string]string {
	// Empty: every target is met. The three library bugs this suite found (a member
	// list from one random broker, a second's wait after SUBSCRIPTION_NOT_EXIST, commit
	// lag on kill -9) are fixed and covered by regress_test.go.
	return map[string]string{}
}

// TestScenarios runs the CI version of scenarios A–F with real processes: about three
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
			checkTargets(t, res, os.Getenv(strictEnv) != "")
		})
	}
}

// checkTargets fails the test on every target not met, except those knownUnmet lists
// (unless strict), which make it skip with their figures.
func checkTargets(t *testing.T, res Result, strict bool) {
	t.Helper()
	require.NotEmpty(t, res.Targets)
	var known []string
	for _, tg := range res.Targets {
		key := res.Scenario + "/" + tg.Name
		why, isKnown := knownUnmet()[key]
		switch {
		case tg.Met && isKnown:
			t.Logf("known failure %q met this time: %s", key, tg.Detail)
		case tg.Met:
		case isKnown && !strict:
			known = append(known, key+": "+tg.Detail+" — "+why)
		default:
			t.Errorf("target %q not met: %s", key, tg.Detail)
		}
	}
	if len(known) > 0 && !t.Failed() {
		t.Skipf("every other target met; not met yet (set %s=1 to fail on them):\n%s", strictEnv, strings.Join(known, "\n"))
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
