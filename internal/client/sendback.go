package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// Timeouts and names Java uses for send-back and its fallback.
const (
	sendBackTimeout = 5 * time.Second
	// InnerProducerGroup is the producer group of the retry fallback send.
	InnerProducerGroup = "CLIENT_INNER_PRODUCER"
	defaultTopic       = "TBW102"
)

// Name prefixes of the retry and dead-letter topics of a consumer group.
const (
	RetryTopicPrefix = "%RETRY%"
	DLQTopicPrefix   = "%DLQ%"
)

// RetryTopic returns the retry topic of a consumer group.
func RetryTopic(group string) string { return RetryTopicPrefix + group }

// DLQTopic returns the dead-letter topic of a consumer group.
func DLQTopic(group string) string { return DLQTopicPrefix + group }

// SendMessageBack asks the master of msg.BrokerName (the broker that stored msg; its
// store host when the broker is unknown) to consume msg again later:
// CONSUMER_SEND_MSG_BACK with the delay level (0 lets the broker choose 3 + reconsume
// times, -1 sends it to the dead-letter queue) and the group's max reconsume times.
// group is the group on the wire; msg.Topic is the topic as the listener saw it, which
// goes back into the instance's namespace (as Java's sendMessageBack wraps it again).
func (i *Instance) SendMessageBack(ctx context.Context, group string, msg *message.Ext, delayLevel, maxReconsumeTimes int32) error {
	addr, _, ok := i.FindBrokerAddr(msg.BrokerName, MasterID, true)
	if !ok {
		if !msg.StoreHost.IsValid() {
			return fmt.Errorf("client: send back %s: broker %s unknown and no store host", msg.MsgID(), msg.BrokerName)
		}
		addr = msg.StoreHost.String()
	}
	h := protocol.ConsumerSendMsgBackRequest{
		Offset:            msg.CommitLogOffset,
		Group:             group,
		DelayLevel:        delayLevel,
		OriginMsgID:       msg.MsgID(),
		OriginTopic:       i.cfg.Namespace.Wrap(msg.Topic),
		MaxReconsumeTimes: protocol.Some(maxReconsumeTimes),
		BrokerName:        msg.BrokerName,
	}
	_, err := i.invokeWithin(ctx, sendBackTimeout, addr, remoting.NewRequest(protocol.RequestConsumerSendMsgBack, h.Encode(), nil))
	return err
}

// SendRetryMessage is the fallback when SendMessageBack fails, as Java's: a new message
// with msg's body, flag and properties is sent (SEND_MESSAGE_V2, producer group
// CLIENT_INNER_PRODUCER) to the group's retry topic, with RETRY_TOPIC = msg.Topic,
// ORIGIN_MESSAGE_ID, reconsume times + 1, the max reconsume times and delay level
// 3 + reconsume times; the broker moves it to the dead-letter queue when it is past the
// max.
func (i *Instance) SendRetryMessage(ctx context.Context, group string, msg *message.Ext, maxReconsumeTimes int32) error {
	return i.sendToRetryTopic(ctx, group, msg, msg.ReconsumeTimes+1, maxReconsumeTimes)
}

// SendToDeadLetter moves an orderly message past the group's max reconsume times to
// %DLQ%<group>: CONSUMER_SEND_MSG_BACK with delay level -1, which every broker version
// sends straight to the dead-letter queue, or, if that fails, a copy sent to the retry
// topic with reconsume times beyond the max, which brokers route to the dead-letter queue
// whether they compare with > (5.x) or >= (older). (Java's orderly service sends the copy
// with reconsume times equal to the max, which a 5.x broker without the group's lock
// records puts back in the retry topic, over and over.)
func (i *Instance) SendToDeadLetter(ctx context.Context, group string, msg *message.Ext, maxReconsumeTimes int32) error {
	err := i.SendMessageBack(ctx, group, msg, -1, maxReconsumeTimes)
	if err == nil {
		return nil
	}
	if err2 := i.sendToRetryTopic(ctx, group, msg, max(msg.ReconsumeTimes, maxReconsumeTimes)+1, maxReconsumeTimes); err2 != nil {
		return errors.Join(err, err2)
	}
	return nil
}

func (i *Instance) sendToRetryTopic(ctx context.Context, group string, msg *message.Ext, reconsumeTimes, maxReconsumeTimes int32) error {
	topic := RetryTopic(group)
	qs, ok := i.WritableQueues(topic)
	if !ok || len(qs) == 0 {
		if _, err := i.UpdateTopicRoute(ctx, topic); err != nil {
			return fmt.Errorf("client: retry fallback for %s: %w", msg.MsgID(), err)
		}
		if qs, ok = i.WritableQueues(topic); !ok || len(qs) == 0 {
			return fmt.Errorf("client: retry fallback for %s: topic %s has no writable queue", msg.MsgID(), topic)
		}
	}
	q := qs[int(i.retrySeq.Add(1)%int64(len(qs)))]
	addr, err := i.masterAddr(ctx, topic, q.BrokerName)
	if err != nil {
		return err
	}

	props := message.PropertiesFromWire(msg.Properties.String()) // a copy: msg is not changed
	origin := props.Value(message.PropertyOriginMessageID)
	if origin == "" {
		origin = msg.MsgID()
	}
	props.Set(message.PropertyOriginMessageID, origin)
	props.Set(message.PropertyRetryTopic, i.cfg.Namespace.Wrap(msg.Topic))
	if i.cfg.Namespace != "" {
		props.Set(message.PropertyInstanceID, string(i.cfg.Namespace)) // as Java's producer marks what a namespaced client sends
	}
	props.Delete(message.PropertyTransactionPrepared)
	props.Delete(message.PropertyReconsumeTime)
	props.Delete(message.PropertyMaxReconsumeTimes)
	props.Set(message.PropertyDelayTimeLevel, strconv.Itoa(3+int(msg.ReconsumeTimes)))

	_, err = i.sendTo(ctx, addr, InnerProducerGroup, q, &message.Message{Topic: topic, Flag: msg.Flag, Body: msg.Body, Properties: props},
		0, reconsumeTimes, protocol.Some(maxReconsumeTimes))
	return err
}
