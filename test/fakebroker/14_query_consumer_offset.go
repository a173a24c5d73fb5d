package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// QUERY_CONSUMER_OFFSET (14); 4.9.8's ConsumerManageProcessor.queryConsumerOffset.
//
// Supported: the committed offset; for a group without one, the young-queue rule:
// SUCCESS with offset 0 when the queue's min offset is 0 or less (its first message is
// still there: everything is in memory here), else QUERY_NOT_FOUND with 4.9.8's remark
// and empty ext fields. The queue need not exist, as in 4.9.8.
//
// Left out: setZeroIfNotFound (5.x) is ignored, as 4.9.8 ignores it; "in disk" first
// messages (which make 4.9.8 answer QUERY_NOT_FOUND) cannot happen here, TruncateQueue
// gives the other case.
func (b *Broker) queryConsumerOffset(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueryConsumerOffsetRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	off, ok := b.offsets[offsetKey{group: h.ConsumerGroup, topic: h.Topic, queue: h.QueueID}]
	if !ok || off < 0 {
		if b.minOffsetLocked(h.Topic, h.QueueID) <= 0 {
			off, ok = 0, true
		}
	}
	b.mu.Unlock()
	if !ok {
		resp := newResponse(req, protocol.ResponseQueryNotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
		resp.ExtFields = remoting.Fields{}
		return resp
	}
	resp := newResponse(req, protocol.ResponseSuccess, "")
	hdr := protocol.QueryConsumerOffsetResponse{Offset: off}
	resp.ExtFields = hdr.Encode()
	return resp
}

// minOffsetLocked is the min offset of a queue, 0 for a queue that does not exist. It
// runs under b.mu.
func (b *Broker) minOffsetLocked(topic string, queueID int32) int64 {
	if t := b.topics[topic]; t != nil {
		if q := t.queue(queueID); q != nil {
			return q.minOffset()
		}
	}
	return 0
}

// maxOffsetLocked is the max offset of a queue, 0 for a queue that does not exist. It
// runs under b.mu.
func (b *Broker) maxOffsetLocked(topic string, queueID int32) int64 {
	if t := b.topics[topic]; t != nil {
		if q := t.queue(queueID); q != nil {
			return q.maxOffset()
		}
	}
	return 0
}
