package integration

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// Found by the reliability suite (scenarios C and F: 0.6–16 % duplicates). Two members
// share a topic on broker-a and broker-b; broker-a restarts and forgets its consumer
// groups. The member pulling from it heartbeats at once; the other only at its 30 s
// tick. The member list used to come from one broker of the topic picked at random, so a
// member that asked broker-a saw itself alone and took every queue while the other kept
// consuming its own: two owners, two offsets. The list is now the union over every
// master of the topic, and the assignments never overlap.
func TestRestartedBrokerDoesNotSplitTheGroup(t *testing.T) {
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("t", 4))
	ok := func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		return consumer.ConsumeSuccess
	}
	// Default intervals: the member not pulling from broker-a heartbeats it only at its
	// 30 s tick.
	var members []*consumer.PushConsumer
	for _, name := range []string{"m1", "m2"} {
		pc := startConsumer(t, "g", "t", consumer.All(), []consumer.Option{consumer.WithNameServers(c.NameServerAddr()),
			consumer.WithInstanceName(name), consumer.WithTakeoverGrace(0)}, ok)
		defer shutdown(t, pc)
		members = append(members, pc)
	}
	overlap := func() []message.Queue {
		q1, q2 := assignedQueues(members[0], "t"), assignedQueues(members[1], "t")
		var both []message.Queue
		for _, q := range q1 {
			if slices.Contains(q2, q) {
				both = append(both, q)
			}
		}
		return both
	}
	waitFor(t, 10*time.Second, "the group settles at 4 queues each", func() bool {
		return len(assignedQueues(members[0], "t")) == 4 && len(assignedQueues(members[1], "t")) == 4 && len(overlap()) == 0
	})

	a := c.Broker("broker-a")
	a.Stop()
	require.NoError(t, a.Start())
	// Every notification makes the members rebalance again, each time reading the
	// member list.
	for range 50 {
		a.NotifyConsumerIDsChanged("g")
		time.Sleep(100 * time.Millisecond)
		require.Empty(t, overlap(), "queues assigned to both members at once")
	}
}

// assignedQueues returns the queues of topic pc consumes now.
func assignedQueues(pc *consumer.PushConsumer, topic string) []message.Queue {
	var out []message.Queue
	for q := range maps.Keys(pc.Stats().Queues) {
		if q.Topic == topic {
			out = append(out, q)
		}
	}
	return out
}
