package rebalance

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

// A reset whose BeforeRemove declines (an orderly listener call outliving the lock
// wait) keeps the queue dropped for a later pass. That pass must restart it at the
// reset offset and persist the reset offset, not the old in-memory one.
func TestResetOffsetsSurvivesADeclinedRemoval(t *testing.T) {
	var decline atomic.Bool
	h := newHarness(t, func(c *Config) {
		c.BeforeRemove = func(context.Context, message.Queue, *processqueue.ProcessQueue, bool) bool {
			return !decline.Load()
		}
	})
	ctx := context.Background()
	h.r.Rebalance(ctx)
	q := message.Queue{Topic: "t", BrokerName: "a", QueueID: 1}
	old := h.r.ProcessQueues()[q]
	h.offsets.Update(q, 50, true)

	decline.Store(true)
	h.r.ResetOffsets(ctx, "t", map[message.Queue]int64{q: 3})
	require.Same(t, old, h.r.ProcessQueues()[q], "kept, dropped, for a later pass")
	require.True(t, old.Dropped())
	require.Equal(t, int64(3), h.broker.stored[q], "the reset offset is persisted at once")
	h.offsets.Update(q, 60, true) // a late result of the old queue
	h.r.Rebalance(ctx)
	require.Same(t, old, h.r.ProcessQueues()[q], "still declined")

	decline.Store(false)
	h.r.Rebalance(ctx)
	require.NotSame(t, old, h.r.ProcessQueues()[q])
	require.Equal(t, int64(3), h.broker.stored[q], "the later removal persists the reset offset, not the old one")
	require.Equal(t, int64(3), h.puller.offsets()[q], "and the queue restarts there")
}
