package fakebroker

import (
	"fmt"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// ACK_MESSAGE (200051) and BATCH_ACK_MESSAGE (200151); 5.3.3's AckMessageProcessor, with
// WithRocketMQ5.
//
// Supported: TOPIC_NOT_EXIST; MESSAGE_ILLEGAL for a queue id outside the read queues;
// NO_MESSAGE "offset is illegal, ..." for an offset outside the queue; else the
// message's checkpoint (found by the handle's queue, start offset and pop time) marks it
// acked, and the answer is SUCCESS without ext fields or remark, also when no
// checkpoint waits for it any more (revived already: the ack is too late and changes
// nothing, as in 5.3.3). A batch acks, per entry, the offsets start + i of every bit i
// set that are inside the queue; an empty batch is NO_MESSAGE.
//
// Left out: orderly acks (revive queue 999), the KV store path, statistics.
func (b *Broker) ackMessage(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.AckMessageRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	e, err := protocol.ParseExtraInfo(h.ExtraInfo)
	if err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[h.Topic]
	if t == nil {
		return newResponse(req, protocol.ResponseTopicNotExist, "topic["+h.Topic+"] not exist, apply first please! "+faqSuffix)
	}
	if h.QueueID < 0 || h.QueueID >= t.read {
		return newResponse(req, protocol.ResponseMessageIllegal, fmt.Sprintf(
			"queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[/%s]", h.QueueID, h.Topic, t.read, sc.RemoteAddr()))
	}
	q := t.queue(h.QueueID)
	if h.Offset < q.minOffset() || h.Offset > q.maxOffset() {
		return newResponse(req, protocol.ResponseNoMessage, fmt.Sprintf("offset is illegal, key:%s@%d, commit:%d, store:%d~%d",
			h.Topic, h.QueueID, h.Offset, q.minOffset(), q.maxOffset()))
	}
	b.ack(popKey{group: h.ConsumerGroup, topic: h.Topic, queue: h.QueueID}, e.CkQueueOffset, e.PopTime, h.Offset)
	return newResponse(req, protocol.ResponseSuccess, "")
}

func (b *Broker) batchAckMessage(sc conn, req *remoting.Command) *remoting.Command {
	var body protocol.BatchAckRequest
	if len(req.Body) > 0 {
		if err := body.Decode(req.Body); err != nil {
			return badBody(sc, req, err)
		}
	}
	if len(body.Acks) == 0 {
		return newResponse(req, protocol.ResponseNoMessage, "")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range body.Acks {
		a := &body.Acks[i]
		topic := protocol.ExtraInfo{TopicMark: a.Retry}.RealTopic(a.Topic, a.ConsumerGroup)
		t := b.topics[topic]
		if t == nil {
			continue // Java logs "Illegal topic or queue found when batch ack" and goes on
		}
		q := t.queue(a.QueueID)
		if q == nil {
			continue
		}
		key := popKey{group: a.ConsumerGroup, topic: topic, queue: a.QueueID}
		for _, off := range a.Offsets() {
			if off >= q.minOffset() && off <= q.maxOffset() {
				b.ack(key, a.StartOffset, a.PopTime, off)
			}
		}
	}
	return newResponse(req, protocol.ResponseSuccess, "")
}
