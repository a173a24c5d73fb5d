package rebalance

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

// A pass asks for the group's members once per set of brokers, not once per topic:
// 250 topics on the same two brokers cost one union of two answers.
func TestAPassAsksForMembersOncePerBrokerSet(t *testing.T) {
	var topics []string
	h := newHarness(t, func(c *Config) { c.Topics = func() []string { return topics } })
	h.broker.mu.Lock()
	for i := range 250 {
		topic := fmt.Sprintf("t%03d", i)
		topics = append(topics, topic)
		h.broker.queues[topic] = brokerQueues(topic, []string{"a", "b"}, 4)
	}
	topics = append(topics, "%RETRY%g") // on broker a only: another set
	h.broker.mu.Unlock()

	h.r.Rebalance(context.Background())
	require.Equal(t, 2, h.broker.idsCalls)
	require.Len(t, h.r.Queues(), 250*4+1, "c1 of [c1 c2] takes half of each topic")
	h.r.Rebalance(context.Background())
	require.Equal(t, 4, h.broker.idsCalls, "the next pass asks again")
}

// A broker that cannot tell a queue's start offset (down, or never answering) costs a
// pass one call, not one per queue; its queues are tried again soon, and the other
// brokers' queues start meanwhile.
func TestABrokerThatCannotTellOffsetsIsAskedOncePerPass(t *testing.T) {
	h := newHarness(t, nil)
	h.broker.mu.Lock()
	h.broker.ids = []string{"c1"} // alone: every queue is this client's
	h.broker.brokerErr = map[string]error{"a": errors.New("request timed out")}
	h.broker.mu.Unlock()

	h.r.Rebalance(context.Background())
	require.Equal(t, 1, h.broker.queries["a"], "the first failure stops the broker's queues this pass")
	require.Equal(t, brokerQueues("t", []string{"b"}, 4), filterTopic(h.r.Queues(), "t"))
	require.Len(t, h.puller.got, 4)

	h.broker.mu.Lock()
	h.broker.brokerErr = nil
	h.broker.mu.Unlock()
	h.r.Rebalance(context.Background())
	require.Len(t, h.r.Queues(), 9, "broker a's queues start once it answers")
	require.Contains(t, h.r.Queues(), message.Queue{Topic: "%RETRY%g", BrokerName: "a", QueueID: 0})
}
