package processqueue

import (
	"context"
	"github.com/rmqpush/rmqpush/message"
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

func TestDiscardCachedAndClearConsumeStart(t *testing.T) {
	pq := New(time.Now())
	require.False(t, pq.Discarded())
	pq.Discard()
	require.True(t, pq.Discarded())

	msgs := []*message.Ext{{QueueOffset: 1}, {QueueOffset: 2}, {QueueOffset: 3}}
	pq.Put(msgs, -1)
	require.Equal(t, msgs, pq.Cached(msgs))
	pq.Remove(msgs[1:2])
	require.Equal(t, []*message.Ext{msgs[0], msgs[2]}, pq.Cached(msgs))
	require.Equal(t, []*message.Ext{msgs[0]}, pq.Cached([]*message.Ext{msgs[0], {QueueOffset: 3}}), "same offset, another message")

	start := time.Now().Add(-time.Hour)
	pq.MarkConsumeStart(msgs, start)
	require.Len(t, pq.Expired(time.Now(), time.Minute, 10), 2)
	pq.ClearConsumeStart(msgs[:1])
	require.Equal(t, []*message.Ext{msgs[2]}, pq.Expired(time.Now(), time.Minute, 10))
}
