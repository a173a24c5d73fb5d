package consumer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWorkerClock: the worker's clock never goes backwards, stays with the wall clock
// and reads it again every workerClockRebase readings.
func TestWorkerClock(t *testing.T) {
	var c workerClock
	prev := c.now()
	first := c.base
	for i := 1; i < 3*workerClockRebase; i++ {
		now := c.now()
		require.False(t, now.Before(prev), "reading %d went backwards", i)
		require.Less(t, time.Since(now).Abs(), time.Second, "reading %d is not the time", i)
		prev = now
	}
	require.NotEqual(t, first, c.base, "the base was read again")
	require.Equal(t, 3*workerClockRebase, c.reads)
}
