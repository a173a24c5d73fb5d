package pull

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/processqueue"
)

// popAnswerInfos answers c with the given offset infos as the broker wrote them, the
// body holding offsets [from, to) of queue 1.
func popAnswerInfos(t *testing.T, c *popCall, startInfo, msgInfo string, from, to int64) {
	t.Helper()
	hdr := protocol.PopMessageResponse{InvisibleTime: c.h.InvisibleTime, PopTime: time.Now().UnixMilli(), ReviveQID: 3,
		StartOffsetInfo: startInfo, MsgOffsetInfo: msgInfo}
	c.cb(&client.PopResult{Status: client.PopFound, Header: hdr, Body: body(t, "t", from, to, "")}, nil)
}

// ackAllAndFlush acks every message of b; the acks wait for their batch (the linger is
// an hour) until Flush sends them on this goroutine, where a panic fails the test
// instead of killing the test binary from the acker's timer.
func ackAllAndFlush(t *testing.T, h *popHarness, b *processqueue.PopBatch) {
	t.Helper()
	for i := range b.Msgs() {
		h.svc.Apply(h.req, b, i, processqueue.PopActionAck, 0)
	}
	require.NotPanics(t, func() { require.NoError(t, h.svc.Flush(context.Background())) })
}

// A handle whose offset is below its pop's start offset has no bit in a batched ack
// (the shift was negative: a panic on the acker's timer goroutine); it is acked alone.
func TestPopAckBelowStartOffsetGoesSingle(t *testing.T) {
	h := newPopHarness(t, func(c *PopConfig) { c.AckLinger = time.Hour })
	h.svc.Submit(h.req)
	popAnswerInfos(t, h.nextPop(t), "0 1 10", "0 1 5,6", 5, 7)
	ackAllAndFlush(t, h, <-h.disp.batches)
	require.ElementsMatch(t, []int64{5, 6}, h.broker.ackedOffsets())
	h.broker.mu.Lock()
	defer h.broker.mu.Unlock()
	require.Empty(t, h.broker.batches)
	require.Len(t, h.broker.acks, 2)
	require.Zero(t, h.svc.Counters().AckFailed.Load())
}

// A 5.3.3 broker that found the group's committed offset below the queue's min offset
// reads from the min offset but names the old offset as the start: the gap can be
// anything retention removed (10^8 made a 16.7 MB batch body, over the frame limit).
// Those acks go one by one; the others of the same flush still go in one batch.
func TestPopAckFarFromStartOffsetGoesSingle(t *testing.T) {
	h := newPopHarness(t, func(c *PopConfig) { c.AckLinger = time.Hour })
	h.svc.Submit(h.req)
	const far = 100_000_000
	popAnswerInfos(t, h.nextPop(t), "0 1 0", "0 1 100000000,100000001", far, far+2)
	stale := <-h.disp.batches
	c := h.nextPop(t)
	popFound(t, c, far+2, far+4, "")
	fresh := <-h.disp.batches
	for i := range stale.Msgs() {
		h.svc.Apply(h.req, stale, i, processqueue.PopActionAck, 0)
	}
	ackAllAndFlush(t, h, fresh)
	require.ElementsMatch(t, []int64{far, far + 1, far + 2, far + 3}, h.broker.ackedOffsets())
	h.broker.mu.Lock()
	defer h.broker.mu.Unlock()
	require.Len(t, h.broker.acks, 2)
	require.Equal(t, []int64{far, far + 1}, []int64{h.broker.acks[0].Offset, h.broker.acks[1].Offset})
	require.Len(t, h.broker.batches, 1)
	body := h.broker.batches[0].Encode(protocol.StyleStandard)
	require.Less(t, len(body), 1024, "batch body")
	require.Zero(t, h.svc.Counters().AckFailed.Load())
}

// A gap of exactly maxBatchAckGap still goes in a batch; one more does not, nor one
// below the start offset, nor offsets whose difference overflows into the bound.
func TestPopAckGapBound(t *testing.T) {
	for _, tc := range []struct {
		start, offset int64
		batched       bool
	}{
		{1000, 1000, true},
		{1000, 1000 + maxBatchAckGap, true},
		{1000, 1000 + maxBatchAckGap + 1, false},
		{1000, 999, false},
		{-5, 0, false},
		{math.MaxInt64, math.MinInt64, false}, // the difference wraps to 1
	} {
		it := ackItem{h: protocol.ExtraInfo{CkQueueOffset: tc.start, QueueOffset: tc.offset}}
		require.Equal(t, tc.batched, it.batchable(), "start %d, offset %d", tc.start, tc.offset)
	}
}

// missingRoute is a popBroker that knows no broker address until told.
type missingRoute struct {
	*popBroker
	mu    sync.Mutex
	known bool
}

func (b *missingRoute) FindBrokerAddr(name string, id int64, only bool) (string, bool, bool) {
	b.mu.Lock()
	known := b.known
	b.mu.Unlock()
	if !known {
		return "", false, false
	}
	return b.popBroker.FindBrokerAddr(name, id, only)
}

// An ack to a broker missing from the routes waits ackRetryDelay before it looks again
// (it spent its tries at once, microseconds after asking for the routes, and was given
// up); once the route is known it goes out.
func TestPopAckToUnknownBrokerWaitsForTheRoute(t *testing.T) {
	var routes *missingRoute
	h := newPopHarness(t, func(c *PopConfig) {
		routes = &missingRoute{popBroker: c.Broker.(*popBroker), known: true}
		c.Broker = routes
	})
	h.svc.Submit(h.req)
	popFound(t, h.nextPop(t), 0, 1, "")
	b := <-h.disp.batches
	routes.mu.Lock()
	routes.known = false
	routes.mu.Unlock()
	h.svc.Apply(h.req, b, 0, processqueue.PopActionAck, 0)
	// Given up only after maxAckTries lookups ackRetryDelay apart: not within Apply.
	require.Zero(t, h.svc.Counters().AckFailed.Load(), "ack given up without waiting for the route")
	routes.mu.Lock()
	routes.known = true
	routes.mu.Unlock()
	require.NoError(t, h.svc.Flush(context.Background())) // sends the retry now
	require.Equal(t, []int64{0}, h.broker.ackedOffsets())
	require.Zero(t, h.svc.Counters().AckFailed.Load())
}
