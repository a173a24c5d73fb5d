package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// GET_CONSUMER_LIST_BY_GROUP (38); 4.9.8's ConsumerManageProcessor.getConsumerListByGroup.
//
// Supported: the client ids of the group's members ({"consumerIdList":[...]}), with
// empty ext fields as 4.9.8 sends; SYSTEM_ERROR "no consumer for this group, <group>"
// when the group has no member.
//
// Left out: the order of the ids is join order here, a ConcurrentHashMap's order there
// (clients sort them).
func (b *Broker) getConsumerListByGroup(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetConsumerListByGroupRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	var ids []string
	if g := b.groups[h.ConsumerGroup]; g != nil {
		ids = g.clientIDs()
	}
	b.mu.Unlock()
	if len(ids) == 0 {
		resp := newResponse(req, protocol.ResponseSystemError, "no consumer for this group, "+h.ConsumerGroup)
		resp.ExtFields = remoting.Fields{}
		return resp
	}
	resp := newResponse(req, protocol.ResponseSuccess, "")
	resp.ExtFields = remoting.Fields{}
	body := protocol.ConsumerIDList{ConsumerIDList: ids}
	resp.Body = body.Encode(protocol.StyleFastjson)
	return resp
}
