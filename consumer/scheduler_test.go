package consumer

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestSchedulerRunsJobsInOrderAndStops(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := newScheduler()
	s.run()
	got := make(chan int, 10)
	s.after(30*time.Millisecond, func() { got <- 2 })
	s.after(10*time.Millisecond, func() { got <- 1 })
	var ticks atomic.Int32
	s.every(5*time.Millisecond, func() { ticks.Add(1) })
	require.Equal(t, 1, <-got)
	require.Equal(t, 2, <-got)
	require.Eventually(t, func() bool { return ticks.Load() >= 3 }, 5*time.Second, time.Millisecond)
	s.after(time.Hour, func() { t.Error("ran after close") })
	s.close()
	s.close() // idempotent

	never := newScheduler()
	never.close() // never started
}
