package benchkit

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The cpu line is split into busy, idle and steal time (guest time is already in user),
// and two readings give the idle and stolen shares of the time between them.
func TestMachineCPU(t *testing.T) {
	//                  user nice system idle iowait irq softirq steal guest guest_nice
	before, err := ParseMachineCPU("cpu  1000 10 200 5000 40 5 15 100 30 0")
	require.NoError(t, err)
	require.Equal(t, MachineCPU{Busy: 1230, Idle: 5040, Steal: 100}, before)

	after, err := ParseMachineCPU("cpu  1400 10 300 5190 50 5 15 200 60 0")
	require.NoError(t, err)
	idle, steal, err := after.Shares(before)
	require.NoError(t, err)
	require.InDelta(t, 0.25, idle, 1e-9)   // 200 of 800 ticks
	require.InDelta(t, 0.125, steal, 1e-9) // 100 of 800

	_, _, err = before.Shares(before)
	require.Error(t, err, "no time passed")
	_, _, err = before.Shares(after)
	require.Error(t, err, "readings swapped")

	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3 4 5 6 7", "cpu 1 2 3 x 5 6 7 8", "cpu 1 2 3 -4 5 6 7 8"} {
		_, err := ParseMachineCPU(bad)
		require.Error(t, err, "%q", bad)
	}

	m, err := ReadMachineCPU()
	require.NoError(t, err, "this machine's /proc/stat")
	require.Positive(t, m.Busy+m.Idle+m.Steal)
}
