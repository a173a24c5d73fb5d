package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// remarkNotSet is the remark of a response Java created without setting one
// (RemotingCommand.createResponseCommand(Class)), which CHANGE_MESSAGE_INVISIBLETIME
// answers keep (golden p_pop_533, 0121).
const remarkNotSet = "not set any response code"

// CHANGE_MESSAGE_INVISIBLETIME (200053); 5.3.3's ChangeInvisibleTimeProcessor, with
// WithRocketMQ5.
//
// Supported: TOPIC_NOT_EXIST; MESSAGE_ILLEGAL for a queue id outside the read queues;
// NO_MESSAGE for an offset outside [min, max); else a checkpoint of the one message,
// popped now for the new invisible time, and the old handle acked, answered SUCCESS
// with invisibleTime, popTime (now: the message's new handle) and reviveQid. As in
// 5.3.3, the old handle is not checked: a message revived already is then delivered
// twice. Every answer keeps the remark "not set any response code".
//
// Left out: orderly POP, the KV store path.
func (b *Broker) changeInvisibleTime(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.ChangeInvisibleTimeRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	e, err := protocol.ParseExtraInfo(h.ExtraInfo)
	if err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	q, refused := b.handledQueue(sc, req, h.Topic, h.QueueID)
	if refused != nil {
		return refused
	}
	if h.Offset < q.minOffset() || h.Offset >= q.maxOffset() {
		return newResponse(req, protocol.ResponseNoMessage, remarkNotSet)
	}
	if b.pop.pending >= maxCheckpoints {
		return newResponse(req, protocol.ResponseSystemError, remarkNotSet)
	}
	key := popKey{group: h.ConsumerGroup, topic: h.Topic, queue: h.QueueID}
	now := nowMillis()
	b.ack(key, e.CkQueueOffset, e.PopTime, h.Offset)
	b.addCheckpoint(&checkpoint{key: key, start: h.Offset, offsets: []int64{h.Offset}, popTime: now,
		invisible: h.InvisibleTime, reviveQID: e.ReviveQID})
	resp := newResponse(req, protocol.ResponseSuccess, remarkNotSet)
	hdr := protocol.ChangeInvisibleTimeResponse{InvisibleTime: h.InvisibleTime, PopTime: now, ReviveQID: e.ReviveQID}
	resp.ExtFields = hdr.Encode()
	return resp
}
