package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// INVOKE_BROKER_TO_RESET_OFFSET (222); 4.9.8's AdminBrokerProcessor.resetOffset, which
// `mqadmin resetOffsetByTime` sends to every broker of the topic.
//
// Supported: what Broker.ResetOffsetByTime does, answered with the offsets
// ({"offsetTable":{<queue>:offset}}, fastjson-style) and 4.9.8's leftover remark "not set
// any response code"; the C++ client's list body to the clients when the admin's request
// says language CPP (`-c`); SYSTEM_ERROR or CONSUMER_NOT_ONLINE with 4.9.8's remarks.
//
// Left out: nothing a client can see.
func (b *Broker) invokeBrokerToResetOffset(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.ResetOffsetRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	table, code, remark := b.resetOffset(h.Group, h.Topic, h.Timestamp, h.IsForce, req.Language == remoting.LanguageCPP)
	if code != protocol.ResponseSuccess {
		return newResponse(req, code, remark)
	}
	resp := newResponse(req, protocol.ResponseSuccess, "not set any response code")
	body := protocol.ResetOffsetBody{OffsetTable: table}
	resp.Body = body.Encode(protocol.StyleFastjson)
	return resp
}
