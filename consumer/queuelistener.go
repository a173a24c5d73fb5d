package consumer

import (
	"slices"

	"github.com/rmqpush/rmqpush/message"
)

// MessageQueueListener is told which queues of a topic this member consumes after each
// rebalance that changed them (Java 5's MessageQueueListener): all is every readable
// queue of the topic, mine the queues the allocation gave this member (empty when the
// topic has none or the member got none). The group's retry topic is reported too.
// Topics and queues are named without the namespace; the slices are the listener's.
//
// It runs on the rebalancing goroutine after the queues were added and removed (Java:
// the same, after messageQueueChanged's heartbeat); it must not block for long, since
// the next pass waits for it. A listener that panics is a bug in the listener and is not
// recovered.
type MessageQueueListener interface {
	// MessageQueueChanged reports topic's queues after a change.
	MessageQueueChanged(topic string, all, mine []message.Queue)
}

// MessageQueueListenerFunc adapts a function to a MessageQueueListener.
type MessageQueueListenerFunc func(topic string, all, mine []message.Queue)

// MessageQueueChanged calls f.
func (f MessageQueueListenerFunc) MessageQueueChanged(topic string, all, mine []message.Queue) {
	f(topic, all, mine)
}

// WithMessageQueueListener sets the listener told about this member's queues after
// each rebalance that changed them. Default: none.
func WithMessageQueueListener(l MessageQueueListener) Option {
	return func(c *cfg) { c.queueListener = l }
}

// queuesChanged tells the MessageQueueListener, if any, about topic's new assignment.
func (c *PushConsumer) queuesChanged(topic string, all, mine []message.Queue) {
	if c.cfg.queueListener == nil {
		return
	}
	user := func(qs []message.Queue) []message.Queue {
		out := slices.Clone(qs)
		for i := range out {
			out[i] = c.names.UserQueue(out[i])
		}
		return out
	}
	c.cfg.queueListener.MessageQueueChanged(c.names.UserTopic(topic), user(all), user(mine))
}
