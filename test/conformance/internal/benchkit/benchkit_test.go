package benchkit

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	hundred := make([]int64, 100)
	for i := range hundred {
		hundred[i] = int64(i + 1)
	}
	tests := []struct {
		name   string
		sorted []int64
		q      float64
		want   int64
	}{
		{"empty", nil, 0.5, 0},
		{"one", []int64{7}, 0.999, 7},
		{"median of 100", hundred, 0.5, 50},
		{"p99 of 100", hundred, 0.99, 99},
		{"p99.9 of 100 is the max", hundred, 0.999, 100},
		{"max", hundred, 1, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Percentile(tt.sorted, tt.q))
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"odd", []float64{3, 1, 2}, 2},
		{"even takes the lower middle", []float64{4, 1, 3, 2}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.xs...)
			require.Equal(t, tt.want, Median(tt.xs))
			require.Equal(t, in, tt.xs, "input unchanged")
		})
	}
}

func TestBody(t *testing.T) {
	body := make([]byte, 128)
	EncodeBody(body, 1234567890123, true)
	sent, warm, ok := DecodeBody(body)
	require.True(t, ok)
	require.True(t, warm)
	require.Equal(t, int64(1234567890123), sent)
	_, _, ok = DecodeBody(body[:BodyHeader-1])
	require.False(t, ok, "too short")
}

func TestSink(t *testing.T) {
	s := NewSink(3, true, 10)
	body := make([]byte, BodyHeader)
	EncodeBody(body, 100, false)
	s.Observe(body, 350)
	EncodeBody(body, 100, true)
	s.Observe(body, 999) // warm-up: not measured
	s.Observe([]byte("x"), 5)
	s.Add(2)
	select {
	case <-s.Done():
		t.Fatal("done after 2 of 3")
	default:
	}
	s.Add(2)
	<-s.Done()
	require.Equal(t, int64(4), s.Count())
	require.Equal(t, []int64{250}, s.Latencies())
}

func TestResultLine(t *testing.T) {
	r := Result{Client: "rmqpush", Mode: ModeConsume, N: 10, Got: 10, MsgsPerSec: 1.5, Error: "x"}
	back, ok, err := ParseResult(FormatResult(&r))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, r, back)
	_, ok, err = ParseResult(LineReady)
	require.NoError(t, err)
	require.False(t, ok)
	_, ok, err = ParseResult("result {")
	require.True(t, ok)
	require.Error(t, err)
}

func TestOwnUsage(t *testing.T) {
	u := TakeUsage(true)
	require.Positive(t, u.MaxRSS, "VmHWM")
	require.Positive(t, RSS(), "VmRSS")
	require.Positive(t, u.Mallocs)
	cpu, err := ProcessCPU(os.Getpid())
	require.NoError(t, err)
	require.GreaterOrEqual(t, cpu, time.Duration(0))
	_, err = ProcessCPU(-1)
	require.Error(t, err)
}

// TestAppHeap: the heap held is about the size asked for, and live while held.
func TestAppHeap(t *testing.T) {
	require.Zero(t, NewAppHeap(0).Len())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h := NewAppHeap(8)
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Equal(t, 8<<20/72, h.Len())
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	require.Greater(t, grown, int64(7<<20), "live after a collection")
	require.Less(t, grown, int64(10<<20))
	runtime.KeepAlive(h)
}

// startTrace writes an execution trace to the file it is given, and does nothing
// without one.
func TestStartTrace(t *testing.T) {
	stop, err := startTrace("")
	require.NoError(t, err)
	stop()
	path := filepath.Join(t.TempDir(), "run.trace")
	stop, err = startTrace(path)
	require.NoError(t, err)
	stop()
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Positive(t, st.Size())
	_, err = startTrace(filepath.Join(t.TempDir(), "no", "such", "dir"))
	require.Error(t, err)
}
