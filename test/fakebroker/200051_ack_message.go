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
	q, refused := b.handledQueue(sc, req, h.Topic, h.QueueID)
	if refused != nil {
		return refused
	}
	if h.Offset < q.minOffset() || h.Offset > q.maxOffset() {
		return newResponse(req, protocol.ResponseNoMessage, fmt.Sprintf("offset is illegal, key:%s@%d, commit:%d, store:%d~%d",
			h.Topic, h.QueueID, h.Offset, q.minOffset(), q.maxOffset()))
	}
	b.ack(popKey{group: h.ConsumerGroup, topic: h.Topic, queue: h.QueueID}, e.CkQueueOffset, e.PopTime, h.Offset)
	return newResponse(req, protocol.ResponseSuccess, "")
}

// handledQueue returns the queue an ack or an invisible-time change names, or 5.3.3's
// answer when its topic or queue does not exist. b.mu must be held.
func (b *Broker) handledQueue(sc conn, req *remoting.Command, topic string, queueID int32) (*consumeQueue, *remoting.Command) {
	t := b.topics[topic]
	if t == nil {
		return nil, newResponse(req, protocol.ResponseTopicNotExist, "topic["+topic+"] not exist, apply first please! "+faqSuffix)
	}
	if queueID < 0 || queueID >= t.read {
		return nil, newResponse(req, protocol.ResponseMessageIllegal, illegalQueueRemark(sc, topic, queueID, t.read))
	}
	return t.queue(queueID), nil
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
