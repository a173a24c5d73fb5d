package client

import (
	"context"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// SendMessage stores msg in queue q (SEND_MESSAGE_V2 to the master of q's broker) for
// producer group producerGroup and returns the broker's answer. It is the retry
// fallback's transport, and what the examples produce with; it is not a full producer
// (no retries, no compression, no batching).
func (i *Instance) SendMessage(ctx context.Context, producerGroup string, q message.Queue, msg *message.Message) (*protocol.SendMessageResponse, error) {
	addr, err := i.masterAddr(ctx, q.Topic, q.BrokerName)
	if err != nil {
		return nil, err
	}
	return i.sendTo(ctx, addr, producerGroup, q, msg, 0, 0, protocol.Optional[int32]{})
}

// SendEncoded is SendMessage for a body stored as sysFlag says (SysFlagCompressed for a
// zlib body, as Java's producers compress bodies over 4 KiB): the message trace's
// transport.
func (i *Instance) SendEncoded(ctx context.Context, producerGroup string, q message.Queue, msg *message.Message, sysFlag int32) (*protocol.SendMessageResponse, error) {
	addr, err := i.masterAddr(ctx, q.Topic, q.BrokerName)
	if err != nil {
		return nil, err
	}
	return i.sendTo(ctx, addr, producerGroup, q, msg, sysFlag, 0, protocol.Optional[int32]{})
}

func (i *Instance) sendTo(ctx context.Context, addr, producerGroup string, q message.Queue, msg *message.Message,
	sysFlag, reconsumeTimes int32, maxReconsume protocol.Optional[int32]) (*protocol.SendMessageResponse, error) {
	h := protocol.SendMessageRequest{
		ProducerGroup:         producerGroup,
		Topic:                 q.Topic,
		DefaultTopic:          defaultTopic,
		DefaultTopicQueueNums: 4,
		QueueID:               q.QueueID,
		SysFlag:               sysFlag,
		BornTimestamp:         time.Now().UnixMilli(),
		Flag:                  msg.Flag,
		Properties:            msg.Properties.String(),
		ReconsumeTimes:        reconsumeTimes,
		MaxReconsumeTimes:     maxReconsume,
		BrokerName:            q.BrokerName,
	}
	req := remoting.NewRequest(protocol.RequestSendMessageV2, h.EncodeV2(), msg.Body)
	resp, err := i.invoke(ctx, addr, req, protocol.ResponseSuccess, protocol.ResponseFlushDiskTimeout,
		protocol.ResponseFlushSlaveTimeout, protocol.ResponseSlaveNotAvailable)
	if err != nil {
		return nil, err
	}
	var out protocol.SendMessageResponse
	if err := out.Decode(resp.ExtFields); err != nil {
		return nil, answerError(addr, resp, err)
	}
	return &out, nil
}
