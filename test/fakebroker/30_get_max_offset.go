package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// GET_MAX_OFFSET (30); 4.9.8's AdminBrokerProcessor.getMaxOffset.
//
// Supported: the queue's max offset (the offset the next message gets); 0 for a topic or
// queue that does not exist, as 4.9.8 answers.
//
// Left out: committed (5.x) is ignored; everything stored is committed here.
func (b *Broker) getMaxOffset(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetMaxOffsetRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	off := b.maxOffsetLocked(h.Topic, h.QueueID)
	b.mu.Unlock()
	resp := newResponse(req, protocol.ResponseSuccess, "")
	hdr := protocol.GetMaxOffsetResponse{Offset: off}
	resp.ExtFields = hdr.Encode()
	return resp
}
