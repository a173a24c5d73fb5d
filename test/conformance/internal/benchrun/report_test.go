package benchrun

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
)

// An extra worker is compared with rmqpush round by round: medians of the per-round
// CPU differences and throughput ratios, and how many rounds it used less CPU in.
func TestWritePaired(t *testing.T) {
	run := func(tput, cpu float64) ConsumeRun {
		return ConsumeRun{Result: benchkit.Result{MsgsPerSec: tput, CPUPerMillion: cpu}}
	}
	before := []ConsumeRun{run(100, 2.0), run(200, 3.0), run(300, 2.5)}
	ours := []ConsumeRun{run(110, 1.8), run(180, 3.1), run(330, 2.2)}
	var out strings.Builder
	writePaired(&out, "128B", "before", settingDefault, before, ours)
	require.Equal(t, "- 128B, default: before − rmqpush, same rounds (medians of the 3 per-round figures): CPU per M +0.20 s (lower in 1 of 3 rounds), throughput ×0.91\n", out.String())

	out.Reset()
	writePaired(&out, "128B", "before", settingDefault, before, nil)
	require.Empty(t, out.String(), "nothing without rmqpush in the same run")
}

// The consume table's machine column is the median idle and stolen shares of the runs,
// and a dash when a run could not read them.
func TestMachineShares(t *testing.T) {
	run := func(idle, steal float64) ConsumeRun { return ConsumeRun{MachineIdle: idle, MachineSteal: steal} }
	require.Equal(t, "20 % / 10 %", machineShares([]ConsumeRun{run(0.3, 0.05), run(0.1, 0.15), run(0.2, 0.1)}))
	require.Equal(t, "–", machineShares([]ConsumeRun{run(0.3, 0.05), run(-1, -1)}))
	require.Equal(t, "12 % idle, 3 % stolen", formatMachine(0.12, 0.03))
	require.Equal(t, "idle and steal unknown", formatMachine(-1, -1))
}

// A run's machine shares come from two readings; without either, or with readings out of
// order, they are -1 and the log says why when the readings themselves were taken.
func TestRunMachineShares(t *testing.T) {
	var log bytes.Buffer
	r := &runner{cfg: Config{Log: &log}}
	before := &benchkit.MachineCPU{Busy: 100, Idle: 100, Steal: 0}
	after := &benchkit.MachineCPU{Busy: 160, Idle: 130, Steal: 10}

	idle, steal := r.machineShares(before, after)
	require.InDelta(t, 0.3, idle, 1e-9)
	require.InDelta(t, 0.1, steal, 1e-9)
	require.Empty(t, log.String())

	idle, steal = r.machineShares(nil, after)
	require.Equal(t, [2]float64{-1, -1}, [2]float64{idle, steal})
	require.Empty(t, log.String(), "a failed reading was logged when it was taken")

	idle, steal = r.machineShares(after, before)
	require.Equal(t, [2]float64{-1, -1}, [2]float64{idle, steal})
	require.Contains(t, log.String(), "out of order")
}
