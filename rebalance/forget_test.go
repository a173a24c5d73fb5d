package rebalance

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

// Forget leaves a queue whose process queue is no longer the one meant alone; it keeps
// the one meant, dropped, until BeforeRemove lets it go (its listener call ended), and
// then creates the queue again from the broker's offset without persisting its own.
func TestForgetWaitsForBeforeRemoveAndIgnoresStaleQueues(t *testing.T) {
	busy := true
	h := newHarness(t, func(c *Config) {
		c.BeforeRemove = func(context.Context, message.Queue, *processqueue.ProcessQueue, bool) bool { return !busy }
	})
	h.r.Rebalance(context.Background())
	q := message.Queue{Topic: "t", BrokerName: "a", QueueID: 0}
	old := h.r.ProcessQueues()[q]
	h.offsets.Update(q, 2, false)
	h.broker.stored[q] = 7

	h.r.Forget(q, processqueue.New(time.Now())) // stale: another process queue
	require.False(t, old.Dropped())

	h.r.Forget(q, old)
	require.True(t, old.Dropped())
	require.True(t, old.Discarded())
	h.r.Rebalance(context.Background()) // a call still runs on it: kept
	require.Same(t, old, h.r.ProcessQueues()[q])

	busy = false
	h.r.Rebalance(context.Background())
	require.NotSame(t, old, h.r.ProcessQueues()[q])
	require.Equal(t, int64(7), h.puller.request(q).NextOffset, "created again from the broker's offset")
	require.Equal(t, int64(7), h.broker.stored[q], "the stale offset is not persisted")
}
