package rebalance

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
)

// An OFFSET_ILLEGAL answer that arrives while a pass is running (after its
// applyIllegalOffsets, before the topic's turn) made that pass release the dropped
// queue as "expired" and recreated it at the old, illegal offset; the next pass then
// ignored the report (the table held a new request): the corrected offset was lost.
func TestOffsetIllegalDuringAPass(t *testing.T) {
	var h *harness
	var inject atomic.Pointer[func()]
	h = newHarness(t, func(c *Config) {
		c.Topics = func() []string {
			if f := inject.Swap(nil); f != nil {
				(*f)()
			}
			return []string{"%RETRY%g", "t"}
		}
	})
	q := message.Queue{Topic: "t", BrokerName: "a", QueueID: 0}
	h.broker.stored[q] = 10
	h.r.Rebalance(context.Background())
	req := h.puller.request(q)
	require.Equal(t, int64(10), req.NextOffset)
	f := func() {
		req.PQ.SetDropped(true) // as pull.Service does
		h.r.OffsetIllegal(req, 33)
	}
	inject.Store(&f)
	h.r.Rebalance(context.Background()) // the report arrives during this pass
	h.r.Rebalance(context.Background()) // the pass it triggered
	require.Equal(t, int64(33), h.puller.offsets()[q], "the queue restarts at the corrected offset")
}

// A queue made anew (here after OFFSET_ILLEGAL) has a new offset lease: a late result
// of the old request's listener calls or pulls does not move the new start offset.
func TestRecreatedQueueIgnoresTheOldRequestsWrites(t *testing.T) {
	h := newHarness(t, nil)
	q := message.Queue{Topic: "t", BrokerName: "a", QueueID: 0}
	h.broker.stored[q] = 10
	h.r.Rebalance(context.Background())
	old := h.puller.request(q)
	old.PQ.SetDropped(true)
	h.r.OffsetIllegal(old, 33)
	h.r.Rebalance(context.Background())
	renewed := h.puller.request(q)
	require.NotSame(t, old, renewed)
	require.Equal(t, int64(33), renewed.NextOffset)

	h.offsets.UpdateFor(old.Lease, 40, true) // a listener call of the old request ends
	off, err := h.offsets.Read(context.Background(), q, offset.ReadFromMemory)
	require.NoError(t, err)
	require.Equal(t, int64(33), off)
	h.offsets.UpdateFor(renewed.Lease, 34, true)
	off, _ = h.offsets.Read(context.Background(), q, offset.ReadFromMemory)
	require.Equal(t, int64(34), off)
}
