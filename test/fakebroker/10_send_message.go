package fakebroker

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// SEND_MESSAGE (10) and SEND_MESSAGE_V2 (310); 4.9.8's SendMessageProcessor.sendMessage
// with AbstractSendMessageProcessor.msgCheck and CommitLog.putMessage.
//
// Supported:
//   - both header forms (long names, and V2's a…n with the long names as fall-back);
//   - msgCheck: topic validation (blank, characters, length: SYSTEM_ERROR), topics no
//     one may send to (NO_PERMISSION), auto-creation from the default topic (TBW102) with
//     min(defaultTopicQueueNums, 8) queues when on, else TOPIC_NOT_EXIST, a %RETRY% topic
//     created with 1 queue, a queue id beyond the topic's queues (SYSTEM_ERROR, with the
//     TopicConfig text); a negative queue id picks a random writable queue;
//   - a %RETRY% topic: a message whose reconsumeTimes exceeds the group's max (the
//     header's for clients ≥ V3_4_9) goes to %DLQ%<group> (1 queue) with DELAY -1;
//   - the stored message: body and sysFlag as sent, flag, properties rewritten in Java
//     HashMap order with CLUSTER added and WAIT removed (UNIQ_KEY kept, none added:
//     4.9.8 adds none), born
//     timestamp from the header, born host = the client's address, store host = the
//     broker's, reconsumeTimes from the header; a DELAY property > 0 sends it through
//     the delay levels (delay.go), clamped to the highest level;
//   - the answer: msgId (the offsetMsgId), queueId, queueOffset, MSG_REGION
//     (DefaultRegion) and TRACE_ON (true); MESSAGE_ILLEGAL for a record over the max
//     message size (4 MiB) or properties over 32767 bytes; oneway sends are stored and
//     not answered.
//
// Left out: transactional (prepared) messages are refused with NO_PERMISSION, as a
// broker with rejectTransactionMessage=true does; MULTI_TAG topics and unit sub-topics
// have no meaning here; send hooks, statistics and the broker's own flow control
// (SYSTEM_BUSY from a full page cache) never happen unless injected.
func (b *Broker) sendMessage(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.SendMessageRequest
	if err := h.DecodeFor(req.Code, req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	props := parseJProps(h.Properties)
	if v, _ := props.get(message.PropertyTransactionPrepared); strings.EqualFold(v, "true") &&
		!(h.ReconsumeTimes > 0 && delayLevelOf(props) > 0) {
		return newResponse(req, protocol.ResponseNoPermission,
			"the broker["+b.cfg.host+"] sending transaction message is forbidden")
	}
	bornHost := remoteAddrPort(sc)
	b.mu.Lock()
	t, resp := b.msgCheck(sc, req, &h)
	if resp != nil {
		b.mu.Unlock()
		return resp
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = rand.Int32N(max(t.write, 1))
	}
	topic := h.Topic
	if strings.HasPrefix(topic, retryPrefix) {
		group := topic[len(retryPrefix):]
		maxTimes := b.cfg.retryMaxTimes
		if req.Version >= versionV3_4_9 && h.MaxReconsumeTimes.Set {
			maxTimes = h.MaxReconsumeTimes.Value
		}
		if h.ReconsumeTimes > maxTimes {
			props.put(propDelay, "-1")
			topic = DLQTopic(group)
			queueID = 0
			if b.createTopicInSendMessageBack(topic, dlqQueueNums, permRW, 0) == nil {
				b.mu.Unlock()
				return newResponse(req, protocol.ResponseSystemError, "topic["+topic+"] not exist")
			}
		}
	}
	props.put(propCluster, b.cfg.clusterName)
	// 4.9.8 does not store WAIT ("no need to store WAIT=true ... to save 9 bytes").
	props.del(message.PropertyWaitStoreMsgOK)
	in := &inner{
		topic:     topic,
		queueID:   queueID,
		body:      req.Body,
		flag:      h.Flag,
		props:     props,
		propsStr:  props.String(),
		sysFlag:   h.SysFlag,
		bornTs:    h.BornTimestamp,
		bornHost:  bornHost,
		reconsume: h.ReconsumeTimes,
	}
	res, wake, err := b.putMessage(in)
	b.mu.Unlock()
	b.answerHeld(wake)
	if err != nil {
		return putError(req, err)
	}
	resp = newResponse(req, protocol.ResponseSuccess, "")
	hdr := protocol.SendMessageResponse{
		MsgID:       res.msgID,
		QueueID:     queueID,
		QueueOffset: res.queueOffset,
		MsgRegion:   "DefaultRegion",
		TraceOn:     protocol.Some(true),
	}
	resp.ExtFields = hdr.Encode()
	return resp
}

// versionV3_4_9 is the first client version whose maxReconsumeTimes the broker honours.
const versionV3_4_9 = 121

// dlqQueueNums is DLQ_NUMS_PER_GROUP.
const dlqQueueNums = 1

// msgCheck is AbstractSendMessageProcessor.msgCheck: the topic (created if need be) or
// the answer refusing the send. It runs under b.mu.
func (b *Broker) msgCheck(sc conn, req *remoting.Command, h *protocol.SendMessageRequest) (*topicConfig, *remoting.Command) {
	if remark := validateTopic(h.Topic); remark != "" {
		return nil, newResponse(req, protocol.ResponseSystemError, remark)
	}
	if notAllowedSendTopic(h.Topic) {
		return nil, newResponse(req, protocol.ResponseNoPermission, "Sending message to topic["+h.Topic+"] is forbidden.")
	}
	t := b.topics[h.Topic]
	if t == nil {
		sysFlag := int32(0)
		if h.UnitMode {
			sysFlag = topicSysFlag(!strings.HasPrefix(h.Topic, retryPrefix), strings.HasPrefix(h.Topic, retryPrefix))
		}
		t = b.createTopicInSendMessage(h.Topic, h.DefaultTopic, h.DefaultTopicQueueNums, sysFlag)
		if t == nil && strings.HasPrefix(h.Topic, retryPrefix) {
			t = b.createTopicInSendMessageBack(h.Topic, 1, permRW, sysFlag)
		}
		if t == nil {
			return nil, newResponse(req, protocol.ResponseTopicNotExist,
				"topic["+h.Topic+"] not exist, apply first please!"+faqSuffix)
		}
	}
	if h.QueueID >= max(t.write, t.read) {
		return nil, newResponse(req, protocol.ResponseSystemError, fmt.Sprintf(
			"request queueId[%d] is illegal, %s Producer: %s", h.QueueID, t, sc.RemoteAddr()))
	}
	return t, nil
}

// putError is the answer to a send the store refused (handlePutMessageResult).
func putError(req *remoting.Command, err error) *remoting.Command {
	if errors.Is(err, errMessageIllegal) || errors.Is(err, errPropertiesTooBig) {
		return newResponse(req, protocol.ResponseMessageIllegal, remarkMessageIllegal)
	}
	return newResponse(req, protocol.ResponseSystemError, err.Error())
}

// delayLevelOf is Message.getDelayTimeLevel: DELAY as a number, 0 when absent or bad.
func delayLevelOf(p *jprops) int {
	v, ok := p.get(propDelay)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0
	}
	return n
}

// remoteAddrPort is the client's address as the broker stores it (born host).
func remoteAddrPort(sc conn) netip.AddrPort {
	ap, err := netip.ParseAddrPort(sc.RemoteAddr())
	if err != nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
