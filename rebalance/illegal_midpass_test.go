package rebalance

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
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
