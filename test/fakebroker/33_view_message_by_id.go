package fakebroker

import (
	"strconv"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// VIEW_MESSAGE_BY_ID (33); 4.9.8's QueryMessageProcessor.viewMessageById, which admin
// tools call with the commit-log offset of an offsetMsgId.
//
// Supported: the one record stored at the offset as the body; 4.9.8 sends it as a
// zero-copy file region whose header is always JSON, so the answer is JSON whatever the
// request's serialization (golden e2); SYSTEM_ERROR "can not find message by the
// offset, <offset>" when no record starts there (in the request's serialization).
//
// Left out: nothing a client can see.
func (b *Broker) viewMessageByID(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.ViewMessageByIDRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	rec := b.log.record(h.Offset)
	var body []byte
	if rec != nil {
		body = append([]byte(nil), rec...)
	}
	b.mu.Unlock()
	if body == nil {
		return newResponse(req, protocol.ResponseSystemError, "can not find message by the offset, "+strconv.FormatInt(h.Offset, 10))
	}
	resp := newResponse(req, protocol.ResponseSuccess, "")
	resp.Body = body
	resp.Serialize = remoting.SerializeJSON
	return reply(sc, req, resp)
}
