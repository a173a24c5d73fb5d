package benchrun

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every worker gets the application heap's flag and the GOMAXPROCS setting; a negative
// heap is refused by name.
func TestWorkerSettings(t *testing.T) {
	r := &runner{cfg: Config{AppHeapMiB: 64, WorkerGOMAXPROCS: 1}}
	require.Equal(t, []string{"-mode", "consume", "-app-heap", "64"}, r.workerArgs([]string{"-mode", "consume"}))
	require.Equal(t, []string{"GOMAXPROCS=1"}, r.workerEnv())
	none := &runner{}
	require.Equal(t, []string{"-n", "1"}, none.workerArgs([]string{"-n", "1"}))
	require.Nil(t, none.workerEnv())

	cfg := Config{AppHeapMiB: -1, Runs: 1, LatencyRuns: 1, LatencyRate: 1, IdleQueues: 1}
	require.ErrorContains(t, cfg.check(), "-app-heap")
	cfg.AppHeapMiB = 0
	require.NoError(t, cfg.check())
}

// Each round starts with the next client, so none always follows the raw puller.
func TestRotated(t *testing.T) {
	steps := []step{{"a", "default"}, {"b", "default"}, {"c", "default"}}
	require.Equal(t, steps, rotated(steps, 0))
	require.Equal(t, []step{{"b", "default"}, {"c", "default"}, {"a", "default"}}, rotated(steps, 1))
	require.Equal(t, []step{{"c", "default"}, {"a", "default"}, {"b", "default"}}, rotated(steps, 5))
	require.Equal(t, []step{{"a", "default"}, {"b", "default"}, {"c", "default"}}, steps, "steps unchanged")
	require.Nil(t, rotated(nil, 3))
}

// Profiled runs write a CPU and an allocation profile, and with Traces an execution
// trace; traces need the profiles directory.
func TestProfileArgs(t *testing.T) {
	r := &runner{}
	require.Equal(t, []string{"-cpuprofile", "d/x.cpu.pprof", "-memprofile", "d/x.allocs.pprof"}, r.profileArgs("d/x"))
	r.cfg.Traces = true
	require.Equal(t, []string{"-cpuprofile", "d/x.cpu.pprof", "-memprofile", "d/x.allocs.pprof", "-trace", "d/x.trace"}, r.profileArgs("d/x"))

	cfg := Config{Traces: true, Runs: 1, LatencyRuns: 1, LatencyRate: 1, IdleQueues: 1}
	require.ErrorContains(t, cfg.check(), "-traces")
	cfg.ProfileDir = t.TempDir()
	require.NoError(t, cfg.check())
}

// Every built-in client has its worker program, built with the others; a client that is
// neither built in nor an extra worker is refused by name.
func TestClientWorkers(t *testing.T) {
	r := &runner{bin: "/b", cfg: Config{Workers: map[string]string{"old": "/x/old"}}}
	for client, bin := range clientBins {
		require.Equal(t, "/b/"+bin, r.workerBin(client))
		require.Contains(t, buildPackages, "github.com/rmqpush/rmqpush/test/conformance/cmd/"+bin, client)
	}
	require.Equal(t, "/x/old", r.workerBin("old"))
	require.Equal(t, "/b/"+binRaw, r.workerBin("raw"))

	cfg := Config{Runs: 1, LatencyRuns: 1, LatencyRate: 1, IdleQueues: 1, Clients: []string{"orderly-lent", "nope"}}
	require.ErrorContains(t, cfg.check(), `"nope"`)
	cfg.Clients = []string{"orderly", "orderly-lent", "lent", "pop", "pop-lent", "peer", "rmqpush"}
	require.NoError(t, cfg.check())
}
