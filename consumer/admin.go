package consumer

import (
	"context"
	"maps"
	"slices"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
)

// instanceHooks is what the client instance calls: heartbeat data, broker
// notifications and admin requests. It keeps these methods off PushConsumer's API.
type instanceHooks struct{ c *PushConsumer }

func (h instanceHooks) ConsumerData() protocol.ConsumerData {
	c := h.c
	subs := *c.subs.Load()
	data := protocol.ConsumerData{
		GroupName:        c.group,
		ConsumeType:      protocol.ConsumePassively,
		MessageModel:     protocol.MessageModel(c.cfg.model.String()),
		ConsumeFromWhere: protocol.ConsumeFromWhere(c.cfg.consumeFrom.String()),
	}
	for _, topic := range slices.Sorted(maps.Keys(subs)) {
		data.SubscriptionDataSet = append(data.SubscriptionDataSet, subs[topic])
	}
	return data
}

func (h instanceHooks) OnConsumerIDsChanged() { h.rebalanceSoon() }

func (h instanceHooks) OnRouteChanged(string) { h.rebalanceSoon() }

// rebalanceSoon asks for a pass. The consumer registers with the instance only after
// its services exist, so the rebalancer is set; a trigger before its loop starts runs
// at the loop's first turn.
func (h instanceHooks) rebalanceSoon() { h.c.rebalancer.Trigger() }

// ResetOffset applies an admin's offset reset to topic's queues.
func (h instanceHooks) ResetOffset(ctx context.Context, topic string, offsets map[message.Queue]int64) {
	h.c.rebalancer.ResetOffsets(ctx, topic, offsets)
}

// ConsumeMessageDirectly runs the listener on msg for an admin tool. The listener's
// context ends with the request's (its connection closed) or at Shutdown.
func (h instanceHooks) ConsumeMessageDirectly(ctx context.Context, msg *message.Ext, brokerName string) *protocol.ConsumeMessageDirectlyResult {
	c := h.c
	if c.state.Load() != stateRunning {
		return &protocol.ConsumeMessageDirectlyResult{ConsumeResult: protocol.CRThrowException, Remark: "consumer not running"}
	}
	c.names.ResetMessage(msg)
	if logging.Enabled(c.log, logging.LevelInfo) {
		c.log.Log(logging.LevelInfo, "consuming a message directly for an admin tool", "group", c.names.UserGroup, "msgId", msg.MsgID())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.listenerCtx, cancel)()
	return c.service.consumeDirectly(ctx, msg, brokerName)
}

// ConsumerStatus returns the in-memory offsets of topic's queues.
func (h instanceHooks) ConsumerStatus(topic string) map[message.Queue]int64 {
	out := map[message.Queue]int64{}
	for q, off := range h.c.offsets.Table() {
		if q.Topic == topic {
			out[q] = off
		}
	}
	return out
}
