package conformance

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestMembershipLeaveAndJoin has one of two peer consumers of a group leave and a third
// join, on a topic with 4 queues on each of 2 brokers. The peer sends no
// UNREGISTER_CLIENT: it closes its connections, and the fake, as 4.9.8 does on a closed
// channel, drops it from the group and sends NOTIFY_CONSUMER_IDS_CHANGED to the members
// left; a join notifies the group the same way. Each time the peer reports the
// notification, the fake's member list changes, and the queues are redistributed (8 to
// the one left, then 4 and 4) well before the peer's own 20 s rebalance would have done
// it; every message is still consumed.
func TestMembershipLeaveAndJoin(t *testing.T) {
	t.Parallel()
	const topic = "conformance-membership"
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic(topic, 4))
	group := uniqueName("conf-membership")
	var col collector
	start := func(n string) *peerConsumer {
		return startConsumer(t, c, group, group+"-"+n, topic, col.listener(group+"-"+n, nil))
	}
	c1, c2 := start("1"), start("2")
	id1, id2 := c1.clientID(t, c.Brokers()[0]), c2.clientID(t, c.Brokers()[0])
	waitMembers(t, c, group, id1, id2)
	waitSplit(t, c, &col, topic, []int{4, 4})
	want := produceBodies(t, c, topic, "before-leave", 40)
	col.waitAll(t, want)

	// c1 leaves: its connections close, the fake forgets it and notifies c2.
	notified := peerLog.notifications(group)
	left := time.Now()
	c1.stop(t)
	waitMembers(t, c, group, id2)
	require.True(t, assertEventually(func() bool { return peerLog.notifications(group) > notified }),
		"the peer never reported NOTIFY_CONSUMER_IDS_CHANGED after a member left")
	owners := waitSplit(t, c, &col, topic, []int{8})
	t.Logf("after the leave, %s owned all 8 queues within %v", c2.instance, time.Since(left).Round(time.Millisecond))
	for q, o := range owners {
		require.Equal(t, c2.instance, o, "owner of %s", q)
	}

	// c3 joins: both members are notified and the queues are split again.
	notified = peerLog.notifications(group)
	joined := time.Now()
	c3 := start("3")
	id3 := c3.clientID(t, c.Brokers()[0])
	waitMembers(t, c, group, id2, id3)
	require.True(t, assertEventually(func() bool { return peerLog.notifications(group) > notified }),
		"the peer never reported NOTIFY_CONSUMER_IDS_CHANGED after a member joined")
	owners = waitSplit(t, c, &col, topic, []int{4, 4})
	t.Logf("after the join, the queues were split 4 and 4 within %v", time.Since(joined).Round(time.Millisecond))
	for q, o := range owners {
		require.Contains(t, []string{c2.instance, c3.instance}, o, "owner of %s", q)
	}

	n := len(col.deliveries())
	want = append(want, produceBodies(t, c, topic, "after-join", 80)...)
	col.waitAll(t, want)
	for _, d := range col.deliveries()[n:] {
		if strings.HasPrefix(d.body, "after-join") {
			require.NotEqual(t, c1.instance, d.consumer, "%s consumed by the member that left", d.body)
		}
	}
	waitCommitted(t, c, group, topic)
}

// waitMembers waits until every broker of c lists exactly the client ids ids (in any
// order) as the members of group.
func waitMembers(t *testing.T, c *fakebroker.Cluster, group string, ids ...string) {
	t.Helper()
	want := slices.Sorted(slices.Values(ids))
	var last []string
	ok := assertEventually(func() bool {
		for _, b := range c.Brokers() {
			last = slices.Sorted(slices.Values(b.Clients(group)))
			if !slices.Equal(last, want) {
				return false
			}
		}
		return true
	})
	require.True(t, ok, "members of %s never became %v (last seen %v)", group, want, last)
}
