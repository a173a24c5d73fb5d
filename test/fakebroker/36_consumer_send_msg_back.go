package fakebroker

import (
	"errors"
	"strconv"
	"strings"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// CONSUMER_SEND_MSG_BACK (36); 4.9.8's SendMessageProcessor.consumerSendMsgBack.
//
// Supported: the message is looked up by its commit-log offset (SYSTEM_ERROR "look
// message by offset failed, <offset>" when no record starts there) and stored again,
// for the group's %RETRY% topic (created if need be, 1 queue), as a new message: same
// body (as stored), flag, sysFlag, born timestamp and host, reconsumeTimes + 1, store
// host this broker; properties are the original's plus RETRY_TOPIC (the original topic,
// unless already set), WAIT=false, DELAY and ORIGIN_MESSAGE_ID (kept if set, else the
// original's offsetMsgId), in Java HashMap order. Delay level 0 becomes 3 +
// reconsumeTimes; the message waits its level's delay (REAL_TOPIC and REAL_QID are added
// on the way) before it can be pulled from %RETRY%<group> queue 0. When reconsumeTimes ≥
// the max (the header's maxReconsumeTimes for clients ≥ V3_4_9, else 16) or the level
// is negative, it goes at once to %DLQ%<group> (created with 1 queue, perm RW) with
// DELAY=0. The answer has no ext fields.
//
// Left out: consume hooks and statistics; the header's originMsgId and originTopic are
// not used, as in 4.9.8.
func (b *Broker) consumerSendMsgBack(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.ConsumerSendMsgBackRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	topic := RetryTopic(h.Group)
	t := b.createTopicInSendMessageBack(topic, 1, permRW, topicSysFlag(false, h.UnitMode))
	if t == nil {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseSystemError, "topic["+topic+"] not exist")
	}
	if t.perm&permWrite == 0 {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseNoPermission, "the topic["+topic+"] sending message is forbidden")
	}
	rec := b.log.record(h.Offset)
	orig, ok := parseRecord(rec)
	if rec == nil || !ok {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseSystemError, "look message by offset failed, "+strconv.FormatInt(h.Offset, 10))
	}
	props := parseJProps(orig.props)
	if _, ok := props.get(message.PropertyRetryTopic); !ok {
		props.put(message.PropertyRetryTopic, orig.topic)
	}
	props.put(message.PropertyWaitStoreMsgOK, "false")
	level := h.DelayLevel
	maxTimes := b.cfg.retryMaxTimes
	if req.Version >= versionV3_4_9 && h.MaxReconsumeTimes.Set {
		maxTimes = h.MaxReconsumeTimes.Value
	}
	queueID := int32(0) // retryQueueNums is 1
	if orig.reconsumeTimes >= maxTimes || level < 0 {
		topic = DLQTopic(h.Group)
		if b.createTopicInSendMessageBack(topic, dlqQueueNums, permRW, 0) == nil {
			b.mu.Unlock()
			return newResponse(req, protocol.ResponseSystemError, "topic["+topic+"] not exist")
		}
		props.put(propDelay, "0")
	} else {
		if level == 0 {
			level = 3 + orig.reconsumeTimes
		}
		props.put(propDelay, strconv.Itoa(int(level)))
	}
	if v, _ := props.get(message.PropertyOriginMessageID); strings.TrimSpace(v) == "" {
		props.put(message.PropertyOriginMessageID, message.OffsetMsgID(orig.storeHost, orig.offset))
	}
	in := &inner{
		topic:     topic,
		queueID:   queueID,
		body:      orig.body,
		flag:      orig.flag,
		props:     props,
		propsStr:  props.String(),
		sysFlag:   orig.sysFlag,
		bornTs:    orig.bornTs,
		bornHost:  orig.bornHost,
		reconsume: orig.reconsumeTimes + 1,
	}
	_, wake, err := b.putMessage(in)
	b.mu.Unlock()
	b.answerHeld(wake)
	if err != nil {
		return newResponse(req, protocol.ResponseSystemError, putStatus(err))
	}
	return newResponse(req, protocol.ResponseSuccess, "")
}

// putStatus is the PutMessageStatus name 4.9.8 answers a failed send-back with.
func putStatus(err error) string {
	switch {
	case errors.Is(err, errPropertiesTooBig):
		return errPropertiesTooBig.Error()
	case errors.Is(err, errMessageIllegal):
		return errMessageIllegal.Error()
	}
	return "UNKNOWN_ERROR"
}
