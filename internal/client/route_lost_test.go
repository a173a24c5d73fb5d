package client

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// A topic whose route lost a broker is polled every second, not every RouteInterval, so
// its queues resume within about a second of the broker's return (issue 15: 17.5 s on a
// real two-master cluster with the 30 s poll).
func TestRouteThatLostABrokerIsPolledOften(t *testing.T) {
	c := newTestCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("t", 2))
	inst, err := New(Config{NameServers: []string{c.NameServerAddr()}, ClientID: "127.0.0.1@test",
		RequestTimeout: 2 * time.Second, RouteInterval: time.Hour, HeartbeatInterval: time.Hour})
	require.NoError(t, err)
	rec := &recorder{group: "g", topics: []string{"t"}}
	require.NoError(t, inst.Register("g", rec))
	require.NoError(t, inst.Start())
	t.Cleanup(inst.Shutdown)
	ctx := context.Background()
	_, err = inst.UpdateTopicRoute(ctx, "t")
	require.NoError(t, err)
	qs, _ := inst.Queues("t")
	require.Len(t, qs, 4)
	require.Empty(t, inst.topicsMissingBrokers(time.Now()))

	b := c.Broker("broker-b")
	b.Stop()
	changed, err := inst.UpdateTopicRoute(ctx, "t")
	require.NoError(t, err)
	require.True(t, changed)
	qs, _ = inst.Queues("t")
	require.Len(t, qs, 2, "broker-b left the route")
	require.Equal(t, []string{"t"}, inst.topicsMissingBrokers(time.Now()))

	require.NoError(t, b.Start())
	deadline := time.Now().Add(5 * time.Second)
	for {
		if qs, _ = inst.Queues("t"); len(qs) == 4 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the route was not polled again within 5 s (the route interval is an hour)")
		time.Sleep(20 * time.Millisecond)
	}
	require.Empty(t, inst.topicsMissingBrokers(time.Now()), "broker-b is back: the topic is polled as usual")

	// A broker gone for good is forgotten after lostBrokerPollFor.
	inst.mu.Lock()
	inst.noteLostBrokers("t", []string{"broker-a", "broker-b", "broker-c"}, []string{"broker-a", "broker-b"}, time.Now().Add(-lostBrokerPollFor))
	inst.mu.Unlock()
	require.Empty(t, inst.topicsMissingBrokers(time.Now()))
}
