package conformance

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestOrderlyLocksAndOrder runs a peer orderly consumer on a topic with 2 queues on each
// of 2 brokers. It locks every queue on its broker (LOCK_BATCH_MQ: the fake's Locks show
// them held by the peer's client id), renews the locks on its RebalanceLockInterval, gets
// each queue's messages once and in queue order, commits their offsets, and when it shuts
// down unlocks them (UNLOCK_BATCH_MQ, rocketmq-client-go since 9bca88d): the locks are
// gone at once, though the fake's lock expiry is the default 60 s.
func TestOrderlyLocksAndOrder(t *testing.T) {
	t.Parallel()
	const topic = "conformance-orderly"
	const perQueue = 30
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic(topic, 2))
	group := uniqueName("conf-orderly")
	instance := group + "-1"
	var col collector
	pc := startConsumer(t, c, group, instance, topic, col.listener(instance, nil),
		consumer.WithConsumerOrder(true),
		consumer.WithRebalanceLockInterval(300*time.Millisecond))
	for _, b := range c.Brokers() {
		hb, ok := b.LastHeartbeat(group)
		require.True(t, ok)
		require.Equal(t, "CONSUME_PASSIVELY", hb.ConsumeType)
	}
	clientID := pc.clientID(t, c.Brokers()[0])

	// Every queue of the topic is locked by the peer's client id, on its own broker.
	all := allQueues(c, topic)
	require.True(t, assertEventually(func() bool { return len(topicLocks(c, group, topic)) == len(all) }),
		"locks held: %v", topicLocks(c, group, topic))
	for q, owner := range topicLocks(c, group, topic) {
		require.Equal(t, clientID, owner, "lock of %s", q)
	}

	// Messages produced in three rounds, so that some arrive while the peer consumes.
	var want []string
	for round := range 3 {
		for _, q := range all {
			var msgs []*message.Message
			for i := range perQueue / 3 {
				body := fmt.Sprintf("%s-%d-%03d", q.BrokerName, q.QueueID, round*perQueue/3+i)
				msgs = append(msgs, &message.Message{Body: []byte(body)})
				want = append(want, body)
			}
			_, err := c.Broker(q.BrokerName).Produce(topic, int(q.QueueID), msgs...)
			require.NoError(t, err)
		}
	}
	col.waitAll(t, want)

	// Each queue's messages arrived once, in queue-offset (and so production) order.
	perQueueSeen := make(map[message.Queue][]delivery)
	for _, d := range col.deliveries() {
		q := message.Queue{Topic: d.topic, BrokerName: d.broker, QueueID: int32(d.queueID)}
		perQueueSeen[q] = append(perQueueSeen[q], d)
	}
	require.Len(t, perQueueSeen, len(all))
	for q, ds := range perQueueSeen {
		require.Len(t, ds, perQueue, "deliveries of %s", q)
		for i, d := range ds {
			require.EqualValues(t, i, d.queueOffset, "delivery %d of %s", i, q)
			require.Equal(t, fmt.Sprintf("%s-%d-%03d", q.BrokerName, q.QueueID, i), d.body)
		}
	}

	// The peer renews its locks every RebalanceLockInterval (lockAll, after a first one
	// 1 s after Start).
	before, since := lockRequests(c), time.Now()
	require.True(t, assertEventually(func() bool { return lockRequests(c) >= before+3*len(c.Brokers()) }),
		"LOCK_BATCH_MQ requests went from %d to only %d", before, lockRequests(c))
	t.Logf("%d more LOCK_BATCH_MQ requests in %v", lockRequests(c)-before, time.Since(since).Round(time.Millisecond))
	for q, owner := range topicLocks(c, group, topic) {
		require.Equal(t, clientID, owner, "lock of %s after renewals", q)
	}

	waitCommitted(t, c, group, topic)

	pc.stop(t)
	require.Empty(t, topicLocks(c, group, topic), "locks left after the peer shut down")
	for _, b := range c.Brokers() {
		require.Positive(t, b.Requests(codeUnlockBatchMQ), "UNLOCK_BATCH_MQ on %s", b.Name())
	}
}

// topicLocks returns the fake's locks of group on the queues of topic, on every broker.
func topicLocks(c *fakebroker.Cluster, group, topic string) map[message.Queue]string {
	out := make(map[message.Queue]string)
	for _, b := range c.Brokers() {
		for q, owner := range b.Locks(group) {
			if q.Topic == topic {
				out[q] = owner
			}
		}
	}
	return out
}

// lockRequests returns the LOCK_BATCH_MQ requests every broker of c received.
func lockRequests(c *fakebroker.Cluster) int {
	n := 0
	for _, b := range c.Brokers() {
		n += b.Requests(codeLockBatchMQ)
	}
	return n
}
