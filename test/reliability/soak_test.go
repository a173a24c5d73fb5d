package reliability

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/test/reliability/record"
)

func TestSoakTally(t *testing.T) {
	tl := newSoakTally("S-")
	at := time.Unix(100, 0)
	for _, r := range []record.Record{
		{ID: soakID("S-", 0), Status: record.StatusOK, At: at},
		{ID: soakID("S-", 2), Status: record.StatusOK, At: at},
		{ID: soakID("S-", 2), Status: record.StatusLater, At: at},
		{ID: soakID("S-", 2), Status: record.StatusOK, At: at.Add(time.Second), PID: 7},
		{ID: "other-1", Status: record.StatusOK, At: at},
	} {
		tl.record(r)
	}
	require.Equal(t, "S-000000002", soakID("S-", 2))
	require.Equal(t, 2, tl.ok)
	require.Equal(t, 1, tl.bad)
	require.Equal(t, []soakDup{{id: "S-000000002", first: at, second: at.Add(time.Second), pid: 7}}, tl.dups)
	lost, some := tl.lost(4)
	require.Equal(t, 2, lost)
	require.Equal(t, []string{"S-000000001", "S-000000003"}, some)
}

func TestMedianSample(t *testing.T) {
	m := medianSample([]SoakSample{{RSS: 30, Goroutines: 40, Connections: 3}, {RSS: 10, Goroutines: 34, Connections: 4}, {RSS: 20, Goroutines: 35, Connections: 3}})
	require.Equal(t, SoakSample{RSS: 20, Goroutines: 35, Connections: 3}, m)
}

func TestWriteSoakReport(t *testing.T) {
	var b strings.Builder
	require.NoError(t, WriteSoakReport(&b, SoakResult{
		Result: Result{Scenario: "S", Title: "soak", Messages: 10, Duplicates: 7, Targets: []Target{{Name: "0 lost", Met: true, Detail: "0 lost of 10"}}},
		Faults: []SoakFault{
			{At: time.Minute, Kind: "member churn", Detail: "consumer-02 stopped with SIGKILL, consumer-03 started",
				Duplicates: []string{"a", "b", "c", "d", "e", "f"}},
			{At: 2 * time.Minute, Kind: "connection drop", Detail: "broker-a's connections closed"},
		},
		Unattributed: []string{"g"},
		SamplesPath:  "/tmp/samples.tsv",
	}))
	out := b.String()
	require.Contains(t, out, "| S. soak")
	require.Contains(t, out, "member churn       consumer-02 stopped with SIGKILL, consumer-03 started ")
	require.Contains(t, out, "6 duplicates: a b c d e … (1 more)")
	require.Contains(t, out, "0 duplicates\n")
	require.Contains(t, out, "duplicates after no fault: [g]")
}
