package rebalance

import (
	"slices"

	"github.com/rmqpush/rmqpush/message"
)

// ByConfig is Java's AllocateMessageQueueByConfig ("CONFIG"): the client consumes a
// fixed list of queues, whatever the group's queues and clients are. As in Java it
// checks nothing; two clients configured with the same queue both consume it.
type ByConfig struct {
	queues []message.Queue
}

// NewByConfig returns a ByConfig that always allocates queues (copied).
func NewByConfig(queues []message.Queue) *ByConfig {
	return &ByConfig{queues: slices.Clone(queues)}
}

// Name returns "CONFIG".
func (*ByConfig) Name() string { return NameByConfig }

// Allocate returns a copy of the configured queues and never fails.
func (c *ByConfig) Allocate(_, _ string, _ []message.Queue, _ []string) ([]message.Queue, error) {
	if c == nil || len(c.queues) == 0 {
		return []message.Queue{}, nil
	}
	return slices.Clone(c.queues), nil
}
