package client

import (
	"context"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
)

// Consumer is what the Instance needs from a consumer registered with it. The Instance
// calls these from its scheduler and from the goroutines that answer broker requests;
// the notification methods must not block.
type Consumer interface {
	// ConsumerData returns the group's heartbeat entry, subscriptions included (the retry
	// topic too). The topics of its subscriptions are the topics whose routes the
	// Instance keeps.
	ConsumerData() protocol.ConsumerData
	// OnConsumerIDsChanged is called when a broker says the group's members changed.
	OnConsumerIDsChanged()
	// OnRouteChanged is called when the route of one of the consumer's topics changed.
	OnRouteChanged(topic string)
	// ResetOffset resets the consumer's offsets of topic's queues (an admin's
	// resetOffsetByTime, through the broker).
	ResetOffset(ctx context.Context, topic string, offsets map[message.Queue]int64)
	// RunningInfo returns the consumer's state for admin tools.
	RunningInfo() *protocol.ConsumerRunningInfo
	// ConsumeMessageDirectly runs the consumer's listener on msg for an admin tool.
	ConsumeMessageDirectly(ctx context.Context, msg *message.Ext, brokerName string) *protocol.ConsumeMessageDirectlyResult
	// ConsumerStatus returns the consumer's offsets of topic's queues.
	ConsumerStatus(topic string) map[message.Queue]int64
}
