package conformance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestClusteringTwoConsumersShareEightQueues runs two peer push consumers of one group
// on a topic with 4 queues on each of 2 brokers. The fake registers both (heartbeats,
// GET_CONSUMER_LIST_BY_GROUP), so the peer's averaging allocation gives each 4 queues;
// the peer's producer then sends 200 messages, every one is consumed by the consumer
// owning its queue, and the offsets the fake stores for the group (UPDATE_CONSUMER_OFFSET
// and commit-by-pull) reach each queue's max offset.
func TestClusteringTwoConsumersShareEightQueues(t *testing.T) {
	t.Parallel()
	const topic = "conformance-clustering"
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic(topic, 4))
	group := uniqueName("conf-clustering")
	var col collector
	consumers := []*peerConsumer{
		startConsumer(t, c, group, group+"-1", topic, col.listener(group+"-1", nil)),
		startConsumer(t, c, group, group+"-2", topic, col.listener(group+"-2", nil)),
	}

	// Both members are registered on both brokers, with what the peer's heartbeat said.
	ids := make(map[string]string) // client id → instance
	for _, b := range c.Brokers() {
		for _, pc := range consumers {
			ids[pc.clientID(t, b)] = pc.instance
		}
		require.Len(t, b.Clients(group), 2, "members on %s", b.Name())
		hb, ok := b.LastHeartbeat(group)
		require.True(t, ok)
		require.Equal(t, "GO", hb.Language)
		require.Equal(t, "CONSUME_PASSIVELY", hb.ConsumeType)
		require.Equal(t, "CLUSTERING", hb.MessageModel)
		require.Equal(t, "CONSUME_FROM_FIRST_OFFSET", hb.ConsumeFromWhere)
		var subs []string
		for _, s := range hb.Subscriptions {
			subs = append(subs, s.Topic)
		}
		require.ElementsMatch(t, []string{topic, fakebroker.RetryTopic(group)}, subs)
		// A 4.9.8 broker creates the group's retry topic on its first heartbeat.
		_, ok = b.Topic(fakebroker.RetryTopic(group))
		require.True(t, ok, "%s has no %s", b.Name(), fakebroker.RetryTopic(group))
		require.Positive(t, b.Requests(codeHeartBeat))
	}
	require.Len(t, ids, 2)

	// Wait for the allocation to settle: 4 queues each, disjoint, covering all 8. What
	// each consumer says it consumes (GET_CONSUMER_RUNNING_INFO, asked by the fake and
	// decoded by it) agrees with who consumed the probes.
	owner := waitSplit(t, c, &col, topic, []int{4, 4})
	require.Positive(t, c.Brokers()[0].Requests(codeGetConsumerListByGroup)+c.Brokers()[1].Requests(codeGetConsumerListByGroup))
	for id, instance := range ids {
		var mine []message.Queue
		for q, o := range owner {
			if o == instance {
				mine = append(mine, q)
			}
		}
		slices.SortFunc(mine, message.Queue.Compare)
		for _, b := range c.Brokers() {
			require.Equal(t, mine, queuesOf(t, b, group, id, topic), "running info of %s through %s", instance, b.Name())
		}
	}

	p := startProducer(t, c, uniqueName("conf-clustering-producer"))
	var want []string
	for i := range 200 {
		body := fmt.Sprintf("clustering-%d", i)
		_, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body)))
		require.NoError(t, err)
		want = append(want, body)
	}
	col.waitAll(t, want)

	perConsumer := make(map[string]int)
	for _, d := range col.deliveries() {
		if strings.HasPrefix(d.body, "probe-") {
			continue
		}
		q := message.Queue{Topic: d.topic, BrokerName: d.broker, QueueID: int32(d.queueID)}
		require.Equal(t, owner[q], d.consumer, "message %s of %s", d.body, q)
		perConsumer[d.consumer]++
	}
	require.Len(t, perConsumer, 2, "deliveries per consumer: %v", perConsumer)
	waitCommitted(t, c, group, topic)

	// Each consumer's own offsets (GET_CONSUMER_STATUS_FROM_CLIENT) are the max offsets
	// of the queues it owns.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, err := c.Brokers()[1].ConsumerStatus(ctx, group, topic, "")
	require.NoError(t, err)
	require.Len(t, status, 2)
	for id, offsets := range status {
		instance, ok := ids[id]
		require.True(t, ok, "status from unknown client %s", id)
		for q, off := range offsets {
			require.Equal(t, instance, owner[q], "%s reports an offset for %s", instance, q)
			require.Equal(t, c.Broker(q.BrokerName).MaxOffset(topic, int(q.QueueID)), off, "%s's offset of %s", instance, q)
		}
		require.Len(t, offsets, 4, "offsets reported by %s", instance)
	}
}

// waitSplit waits until the consumers of group own disjoint sets of topic's queues that
// together cover every queue, of the sizes in counts (sorted), and returns each queue's
// owner instance. It finds the owners by probing: one message produced to every queue
// per round, and who consumed it; it stops when two rounds in a row agree and have the
// wanted sizes. (The peer's running info would say it directly, but the peer encodes it
// while its rebalancer writes the same fields, which the race detector reports.)
func waitSplit(t *testing.T, c *fakebroker.Cluster, col *collector, topic string, counts []int) map[message.Queue]string {
	t.Helper()
	all := allQueues(c, topic)
	var owner, prev map[message.Queue]string
	var sizes []int
	for round := 0; ; round++ {
		var want []string
		for _, q := range all {
			body := fmt.Sprintf("probe-%d-%s-%d", round, q.BrokerName, q.QueueID)
			_, err := c.Broker(q.BrokerName).Produce(topic, int(q.QueueID), &message.Message{Body: []byte(body)})
			require.NoError(t, err)
			want = append(want, body)
		}
		col.waitAll(t, want)
		got := col.byBody()
		owner = make(map[message.Queue]string)
		per := make(map[string]int)
		for i, q := range all {
			ds := got[want[i]]
			owner[q] = ds[len(ds)-1].consumer
			per[owner[q]]++
		}
		sizes = sizes[:0]
		for _, n := range per {
			sizes = append(sizes, n)
		}
		slices.Sort(sizes)
		if prev != nil && maps.Equal(owner, prev) && slices.Equal(sizes, counts) {
			return owner
		}
		require.Less(t, round, 50, "queues of %s never settled into %v: last owners %v", topic, counts, owner)
		prev = owner
		time.Sleep(100 * time.Millisecond)
	}
}
