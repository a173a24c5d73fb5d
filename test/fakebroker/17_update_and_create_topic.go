package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// UPDATE_AND_CREATE_TOPIC (17); 4.9.8's AdminBrokerProcessor.updateAndCreateTopic, which
// `mqadmin updateTopic` sends.
//
// Supported: the topic is created, or its queue counts and permission changed (queues
// and their messages are kept when counts shrink); a topic named like the cluster is
// refused (SYSTEM_ERROR), as in 4.9.8; the answer keeps 4.9.8's remark "not set any
// response code" (golden a_produce).
//
// Left out: the topic filter type (SINGLE_TAG only), order and topicSysFlag are
// accepted and ignored; queue counts are limited to 1024.
func (b *Broker) updateAndCreateTopic(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.CreateTopicRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	if h.Topic == b.cfg.clusterName {
		return newResponse(req, protocol.ResponseSystemError, "the topic["+h.Topic+"] is conflict with system reserved words.")
	}
	if remark := validateTopic(h.Topic); remark != "" {
		return newResponse(req, protocol.ResponseSystemError, remark)
	}
	b.mu.Lock()
	if b.topics[h.Topic] == nil && len(b.topics) >= maxTopics {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseSystemError, "fakebroker: too many topics on this broker")
	}
	read := min(max(h.ReadQueueNums, 0), maxQueueNums)
	write := min(max(h.WriteQueueNums, 0), maxQueueNums)
	b.setTopicLocked(h.Topic, read, write, h.Perm)
	b.mu.Unlock()
	return newResponse(req, protocol.ResponseSuccess, "not set any response code")
}
