package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// UPDATE_CONSUMER_OFFSET (15); 4.9.8's ConsumerManageProcessor.updateConsumerOffset.
//
// Supported: the offset is stored as given (no check of topic, queue or direction, as
// 4.9.8), for oneway requests too; the answer has empty ext fields.
//
// Left out: nothing a client can see. Beyond 4M offsets the broker stops storing new
// ones, where a real one keeps growing.
func (b *Broker) updateConsumerOffset(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.UpdateConsumerOffsetRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	b.commitConsumerOffset(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset, false)
	b.mu.Unlock()
	resp := newResponse(req, protocol.ResponseSuccess, "")
	resp.ExtFields = remoting.Fields{}
	return resp
}
