package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// GET_MIN_OFFSET (31); 4.9.8's AdminBrokerProcessor.getMinOffset.
//
// Supported: the queue's min offset (0 unless TruncateQueue moved it); 0 for a topic or
// queue that does not exist, as 4.9.8 answers.
//
// Left out: nothing a client can see.
func (b *Broker) getMinOffset(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetMinOffsetRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	off := b.minOffsetLocked(h.Topic, h.QueueID)
	b.mu.Unlock()
	resp := newResponse(req, protocol.ResponseSuccess, "")
	hdr := protocol.GetMinOffsetResponse{Offset: off}
	resp.ExtFields = hdr.Encode()
	return resp
}
