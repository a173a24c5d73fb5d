package rebalance

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/pull"
)

// assigner answers QUERY_ASSIGNMENT from a table, or with err.
type assigner struct {
	mu       sync.Mutex
	by       map[string][]protocol.QueueAssignment
	err      error
	strategy string
	calls    int
}

func (a *assigner) QueryAssignment(_ context.Context, topic, group, strategy string, model protocol.MessageModel) ([]protocol.QueueAssignment, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	a.strategy = strategy
	if a.err != nil {
		return nil, a.err
	}
	return a.by[topic], nil
}

func (a *assigner) set(topic string, as ...protocol.QueueAssignment) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.by[topic] = as
}

type popPuller struct {
	mu  sync.Mutex
	got []*pull.PopRequest
}

func (p *popPuller) Submit(r *pull.PopRequest) { p.mu.Lock(); p.got = append(p.got, r); p.mu.Unlock() }

func pop(topic, broker string, id int32) protocol.QueueAssignment {
	return protocol.QueueAssignment{Queue: message.Queue{Topic: topic, BrokerName: broker, QueueID: id}, Mode: protocol.RequestModePop}
}

func pulled(topic, broker string, id int32) protocol.QueueAssignment {
	return protocol.QueueAssignment{Queue: message.Queue{Topic: topic, BrokerName: broker, QueueID: id}, Mode: protocol.RequestModePull}
}

func TestBrokerAssignsPullAndPopQueues(t *testing.T) {
	as := &assigner{by: map[string][]protocol.QueueAssignment{}}
	pp := &popPuller{}
	retryTopics := map[string]bool{}
	h := newHarness(t, func(c *Config) {
		c.Assigner, c.PopPuller, c.PopInitMode = as, pp, protocol.InitModeMin
		c.TakeoverGrace = 0
		c.PopRetryTopic = func(topic string, on bool) { retryTopics[topic] = on }
	})
	as.set("t", pop("t", "a", -1), pop("t", "b", -1))
	as.set("%RETRY%g", pulled("%RETRY%g", "a", 0))
	h.r.Rebalance(context.Background())
	require.Equal(t, NameAveragely, as.strategy)
	require.Equal(t, []message.Queue{{Topic: "%RETRY%g", BrokerName: "a", QueueID: 0}}, h.r.Queues(), "the retry topic pulled")
	require.Len(t, h.r.PopRequests(), 2)
	require.Len(t, pp.got, 2)
	require.Equal(t, protocol.InitModeMin, pp.got[0].InitMode)
	require.Equal(t, map[string]bool{"t": false}, retryTopics, "all POP: the POP retry topic is popped by the broker")
	require.ElementsMatch(t, []string{"t", "%RETRY%g"}, h.changes)

	// Broker b's queue goes; nothing else changes.
	as.set("t", pop("t", "a", -1))
	h.r.Rebalance(context.Background())
	require.Len(t, h.r.PopRequests(), 1)
	require.True(t, pp.got[0].PQ.Dropped() || pp.got[1].PQ.Dropped())
	require.Len(t, pp.got, 2)

	// Back to PULL: the POP queues go, the topic's queues are pulled, and the POP retry
	// topic is consumed by pull.
	as.set("t", pulled("t", "a", 0), pulled("t", "a", 1))
	h.r.Rebalance(context.Background())
	require.Empty(t, h.r.PopRequests())
	require.Len(t, filterTopic(h.r.Queues(), "t"), 2)
	require.Equal(t, map[string]bool{"t": true}, retryTopics)

	h.r.DropAll(context.Background())
	require.Empty(t, h.r.Queues())
}

// No answer: the queues stay; a broker without QUERY_ASSIGNMENT: the client allocates
// itself from then on.
func TestBrokerAssignmentFailures(t *testing.T) {
	as := &assigner{by: map[string][]protocol.QueueAssignment{}}
	retryTopics := map[string]bool{}
	h := newHarness(t, func(c *Config) {
		c.Assigner, c.PopPuller = as, &popPuller{}
		c.PopRetryTopic = func(topic string, on bool) { retryTopics[topic] = on }
	})
	as.set("t", pop("t", "a", -1))
	h.r.Rebalance(context.Background())
	require.Len(t, h.r.PopRequests(), 1)
	popped := h.r.PopRequests()[0]

	as.err = client.ErrNoAssignment
	h.r.Rebalance(context.Background())
	require.Len(t, h.r.PopRequests(), 1, "kept")
	require.Positive(t, h.broker.beats)

	as.err = &protocol.BrokerError{Code: protocol.ResponseRequestCodeNotSupported}
	h.r.Rebalance(context.Background())
	calls := as.calls
	require.Equal(t, []message.Queue{{Topic: "t", BrokerName: "a", QueueID: 0}, {Topic: "t", BrokerName: "a", QueueID: 1},
		{Topic: "t", BrokerName: "a", QueueID: 2}, {Topic: "t", BrokerName: "a", QueueID: 3}}, filterTopic(h.r.Queues(), "t"),
		"allocated here, as without an Assigner")
	require.Empty(t, h.r.PopRequests(), "pulled now, so no longer popped: its messages would be consumed twice")
	require.True(t, popped.PQ.Dropped())
	require.Equal(t, map[string]bool{"t": true}, retryTopics, "what was revived for POP is pulled")
	h.r.Rebalance(context.Background())
	require.Equal(t, calls, as.calls, "not asked again")
}

func TestAssignerNeedsPopPuller(t *testing.T) {
	b := &fakeBroker{}
	_, err := New(Config{Group: "g", Strategy: Averagely{}, Broker: b, Offsets: offset.NewRemoteStore("g", b), Puller: &puller{},
		Topics: func() []string { return nil }, Interval: 1, Assigner: &assigner{}})
	require.ErrorContains(t, err, "PopPuller")
}
