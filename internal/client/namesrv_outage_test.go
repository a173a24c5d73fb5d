package client

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/logging/logtest"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// No name server answers for a while (stopped: connections refused; or answering
// nothing): the routes already known stay, a refresh round asks once rather than once
// per topic, one warning says so, and the routes refresh within about a second of the
// name server's return, without waiting for the next RouteInterval.
func TestNameServerOutage(t *testing.T) {
	for _, how := range []string{"stopped", "never answering"} {
		t.Run(how, func(t *testing.T) {
			c := newTestCluster(t, fakebroker.WithTopic("t1", 2), fakebroker.WithTopic("t2", 2), fakebroker.WithTopic("t3", 2))
			log := &logtest.Lines{}
			inst, err := New(Config{NameServers: []string{c.NameServerAddr()}, ClientID: "127.0.0.1@test",
				RequestTimeout: 300 * time.Millisecond, RouteInterval: time.Hour, HeartbeatInterval: time.Hour, Logger: log})
			require.NoError(t, err)
			require.NoError(t, inst.Start())
			defer inst.Shutdown()
			require.NoError(t, inst.Register("g", &recorder{group: "g", topics: []string{"t1", "t2", "t3"}}))
			ctx := context.Background()
			require.NoError(t, inst.RefreshRoutes(ctx))
			ns := c.NameServer()

			var fault *fakebroker.Injection
			if how == "stopped" {
				ns.Stop()
			} else {
				fault, err = ns.Inject(fakebroker.Fault{Code: fakebroker.RequestGetRouteInfoByTopic, Drop: true})
				require.NoError(t, err)
			}
			asked := ns.Requests(fakebroker.RequestGetRouteInfoByTopic)
			for range 3 {
				err := inst.RefreshRoutes(ctx)
				require.ErrorIs(t, err, ErrNoNameServerAnswered)
				require.ErrorContains(t, err, "the routes of 2 more topics kept")
			}
			if how != "stopped" {
				require.Equal(t, asked+3, ns.Requests(fakebroker.RequestGetRouteInfoByTopic), "one call per round, not one per topic")
			}
			qs, ok := inst.Queues("t1")
			require.True(t, ok, "the route already known stays")
			require.Len(t, qs, 2)
			require.Equal(t, 1, log.Count("no name server answers"), "one warning for the outage so far")
			require.Zero(t, log.Count("route refresh failed"))

			// The route changes while the name server is away; the scheduler's next round
			// finds it unanswered and polls every second from then on.
			require.NoError(t, c.CreateTopic("t1", 4))
			inst.RequestRouteRefresh()
			require.Eventually(t, inst.nameServersDown, 5*time.Second, 10*time.Millisecond)
			if how == "stopped" {
				require.NoError(t, ns.Start())
			} else {
				fault.Remove()
			}
			require.Eventually(t, func() bool { qs, _ := inst.Queues("t1"); return len(qs) == 4 }, 10*time.Second, 10*time.Millisecond,
				"the route is fetched again soon after the name server's return (RouteInterval is an hour)")
			require.Eventually(t, func() bool { return log.Count("a name server answers again") == 1 }, 5*time.Second, 10*time.Millisecond)
			require.Equal(t, 1, log.Count("no name server answers"))
		})
	}
}

// Warnings during an outage come at most once per nsOutageWarnEvery.
func TestNameServerOutageWarningsAreRateLimited(t *testing.T) {
	log := &logtest.Lines{}
	inst, err := New(Config{NameServers: []string{"127.0.0.1:1"}, ClientID: "127.0.0.1@test", Logger: log})
	require.NoError(t, err)
	defer inst.Shutdown()
	start := time.Now()
	for s := range 150 { // a failed call every second for 150 s
		inst.nameServersFailed(ErrNoNameServerAnswered, start.Add(time.Duration(s)*time.Second))
	}
	require.Equal(t, 1, log.Count("no name server answers"))
	require.Equal(t, 2, log.Count("still unreachable"), "at 60 s and 120 s")
	require.Equal(t, 1, log.Count("for 2m0s"))
	inst.nameServerAnswered("127.0.0.1:1", start.Add(150*time.Second))
	require.Equal(t, 1, log.Count("answers again"))
	inst.nameServerAnswered("127.0.0.1:1", start.Add(151*time.Second))
	require.Equal(t, 1, log.Count("answers again"), "only the end of an outage is told")
}
