package conformance

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchrun"
)

// TestBenchSmoke runs the benchmark harness (cmd/bench) end to end with tiny figures,
// so that it cannot rot: it builds the workers and the standalone fake broker, preloads
// 2,000 messages, runs every client (POP too) and setting once, a one-second latency run and a
// one-second idle window. It checks that every run completed and reported, never how
// fast: benchmarks are not assertions.
func TestBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four programs and runs them; skipped with -short")
	}
	// Not parallel: it runs before the peer's tests, whose waits on the peer's timers it
	// would otherwise crowd on a small machine.
	cfg := benchrun.Default()
	cfg.Workloads = []benchrun.Workload{{N: 2000, Size: 128}}
	cfg.Runs = 1
	cfg.Clients = []string{"rmqpush", "peer", "pop"}
	cfg.LatencyRate, cfg.LatencyDuration, cfg.LatencyWarmup = 200, time.Second, 200*time.Millisecond
	cfg.Settle = 500 * time.Millisecond
	cfg.IdleQueues, cfg.IdleSettle, cfg.IdleWindow = 16, 500*time.Millisecond, time.Second
	cfg.WorkerTimeout = 2 * time.Minute
	// The realistic mode: a pull service time and a busy core.
	cfg.PullServiceTime, cfg.BusyCore = benchrun.RealisticPullServiceTime, true
	var out, log bytes.Buffer
	cfg.Out, cfg.Log = &out, &log
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := benchrun.Run(ctx, cfg)
	require.NoError(t, err, "harness log:\n%s", log.String())

	// raw, then rmqpush, the peer and rmqpush by POP at default and tuned settings.
	require.Len(t, rep.Consume, 7, "consume-all runs")
	for _, r := range rep.Consume {
		require.GreaterOrEqual(t, r.Got, int64(2000), "%s %s received", r.Client, r.Variant)
		require.Positive(t, r.MsgsPerSec, "%s %s throughput", r.Client, r.Variant)
		require.Positive(t, r.MaxRSSKiB, "%s %s peak RSS", r.Client, r.Variant)
		require.Positive(t, r.PeakGoroutines, "%s %s goroutines", r.Client, r.Variant)
		if r.Client == "pop" {
			require.Positive(t, r.RequestsPerThousand[protocol.RequestPopMessage], "%s %s pops counted", r.Client, r.Variant)
		} else {
			require.Positive(t, r.RequestsPerThousand[protocol.RequestPullMessage], "%s %s pulls counted", r.Client, r.Variant)
		}
		if r.Client == "rmqpush" {
			require.Positive(t, r.TurnaroundCount, "%s %s pull turnaround measured", r.Client, r.Variant)
		}
	}
	require.Len(t, rep.Latency, 3, "latency runs")
	for _, r := range rep.Latency {
		require.Equal(t, 200, r.LatencyCount, "%s: measured messages (warm-up excluded)", r.Client)
		require.LessOrEqual(t, r.P50Micros, r.MaxMicros, r.Client)
	}
	require.Len(t, rep.Idle, 3, "idle runs")
	for _, r := range rep.Idle {
		require.True(t, r.Counted, "%s: requests counted on the fake", r.Client)
		require.Positive(t, r.PeakGoroutines, r.Client)
	}
	for _, table := range []string{"#### consume-all", "#### latency", "#### idle", "rocketmq-client-go", "raw puller", "pull turnaround p50 / p99"} {
		require.Contains(t, out.String(), table)
	}
}
