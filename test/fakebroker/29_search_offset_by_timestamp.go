package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// SEARCH_OFFSET_BY_TIMESTAMP (29); 4.9.8's AdminBrokerProcessor.searchOffsetByTimestamp
// with ConsumeQueue.getOffsetInQueueByTime.
//
// Supported: 4.9.8's binary search over the queue's store timestamps: a message stored
// at exactly the timestamp; otherwise the nearer of the last message stored before and
// the first stored after (the earlier on a tie); the first message when all are later,
// the last (not the max offset) when all are earlier; 0 for an empty or unknown queue.
//
// Left out: boundaryType (5.x) is ignored, as 4.9.8 ignores it.
func (b *Broker) searchOffsetByTimestamp(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.SearchOffsetRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	off := b.offsetByTimeLocked(h.Topic, h.QueueID, h.Timestamp)
	b.mu.Unlock()
	resp := newResponse(req, protocol.ResponseSuccess, "")
	hdr := protocol.SearchOffsetResponse{Offset: off}
	resp.ExtFields = hdr.Encode()
	return resp
}

// offsetByTimeLocked is ConsumeQueue.getOffsetInQueueByTime. It runs under b.mu.
func (b *Broker) offsetByTimeLocked(topic string, queueID int32, ts int64) int64 {
	t := b.topics[topic]
	if t == nil {
		return 0
	}
	q := t.queue(queueID)
	if q == nil || q.maxOffset() == q.minOffset() {
		return 0
	}
	low, high := q.minOffset(), q.maxOffset()-1
	target, left, right := int64(-1), int64(-1), int64(-1)
	leftTs, rightTs := int64(-1), int64(-1)
	for high >= low {
		mid := (low + high) / 2
		rec := b.log.at(q.entry(mid).pos, q.entry(mid).size)
		if rec == nil {
			return 0
		}
		st := recordStoreTime(rec)
		switch {
		case st == ts:
			target = mid
		case st > ts:
			high, right, rightTs = mid-1, mid, st
		default:
			low, left, leftTs = mid+1, mid, st
		}
		if target >= 0 {
			break
		}
	}
	switch {
	case target >= 0:
		return target
	case leftTs == -1:
		return right
	case rightTs == -1:
		return left
	case abs(ts-leftTs) > abs(ts-rightTs):
		return right
	}
	return left
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
