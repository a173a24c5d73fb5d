package processqueue

import (
	"context"
	"fmt"
)

// BeginConsume records that a consume service handed messages of this queue to a
// listener. Every call must be matched by one EndConsume after the call's results were
// applied (offset updated, failed messages sent back).
func (pq *ProcessQueue) BeginConsume() {
	pq.inflightMu.Lock()
	pq.inflight++
	pq.inflightMu.Unlock()
}

// EndConsume records that a consume call begun with BeginConsume finished.
func (pq *ProcessQueue) EndConsume() {
	pq.inflightMu.Lock()
	defer pq.inflightMu.Unlock()
	if pq.inflight == 0 {
		panic("processqueue: EndConsume without BeginConsume")
	}
	pq.inflight--
	if pq.inflight == 0 && pq.idle != nil {
		close(pq.idle)
		pq.idle = nil
	}
}

// InflightConsumes returns the number of consume calls begun and not yet ended.
func (pq *ProcessQueue) InflightConsumes() int {
	pq.inflightMu.Lock()
	defer pq.inflightMu.Unlock()
	return pq.inflight
}

// WaitConsumeIdle waits until no consume call is in flight on the queue, or ctx ends
// (then it returns an error wrapping ctx.Err()). Rebalance calls it after marking a
// queue dropped, so the progress of the calls in flight is persisted before another
// client takes the queue over.
func (pq *ProcessQueue) WaitConsumeIdle(ctx context.Context) error {
	pq.inflightMu.Lock()
	if pq.inflight == 0 {
		pq.inflightMu.Unlock()
		return nil
	}
	if pq.idle == nil {
		pq.idle = make(chan struct{})
	}
	idle := pq.idle
	pq.inflightMu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("processqueue: waiting for consume calls in flight: %w", ctx.Err())
	}
}
