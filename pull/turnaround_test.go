package pull

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for us := uint64(0); us < 1<<20; us += 1 + us/64 {
		b := bucket(us)
		require.GreaterOrEqual(t, b, prev, "buckets grow with durations (%d µs)", us)
		require.LessOrEqual(t, uint64(time.Duration(us)*time.Microsecond), uint64(bucketTop(b)), "%d µs fits under its bucket's top", us)
		if b > 0 {
			require.Greater(t, uint64(time.Duration(us)*time.Microsecond), uint64(bucketTop(b-1)), "%d µs is above the previous bucket", us)
		}
		// Within 1/8 of the value.
		require.LessOrEqual(t, float64(bucketTop(b)), float64(time.Duration(us)*time.Microsecond)*1.125+float64(time.Microsecond))
		prev = b
	}
	require.Equal(t, histBuckets-1, bucket(1<<62), "beyond the range: the last bucket")
}

func TestHistogramSummary(t *testing.T) {
	var h histogram
	require.Equal(t, Turnaround{}, h.summary())
	for i := 0; i < 980; i++ {
		h.record(20 * time.Microsecond)
	}
	for i := 0; i < 19; i++ {
		h.record(200 * time.Microsecond)
	}
	h.record(3 * time.Millisecond)
	h.record(-time.Second) // a clock step: counted as 0
	s := h.summary()
	require.Equal(t, int64(1001), s.Count)
	require.InDelta(t, float64(20*time.Microsecond), float64(s.P50), float64(3*time.Microsecond))
	require.InDelta(t, float64(200*time.Microsecond), float64(s.P99), float64(25*time.Microsecond))
	require.InDelta(t, float64(3*time.Millisecond), float64(s.Max), float64(375*time.Microsecond))
}
