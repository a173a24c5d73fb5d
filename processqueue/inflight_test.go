package processqueue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestWaitConsumeIdle(t *testing.T) {
	defer goleak.VerifyNone(t)
	pq := New(time.Now())
	require.NoError(t, pq.WaitConsumeIdle(context.Background()), "nothing in flight")

	pq.BeginConsume()
	pq.BeginConsume()
	require.Equal(t, 2, pq.InflightConsumes())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, pq.WaitConsumeIdle(ctx), context.Canceled)

	done := make(chan error)
	go func() { done <- pq.WaitConsumeIdle(context.Background()) }()
	pq.EndConsume()
	select {
	case <-done:
		t.Fatal("returned with one call still in flight")
	default:
	}
	pq.EndConsume()
	require.NoError(t, <-done)
	require.Panics(t, pq.EndConsume)

	pq.BeginConsume() // a new round gets a new channel
	require.ErrorIs(t, pq.WaitConsumeIdle(ctx), context.Canceled)
	pq.EndConsume()
	require.NoError(t, pq.WaitConsumeIdle(ctx))
}
