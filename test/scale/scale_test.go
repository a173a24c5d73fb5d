package scale

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/test/fakebroker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The goroutines a consumer adds do not grow with its queues: no goroutine per queue,
// per topic or per pull. Consumers of 10 and of 40 topics (2 brokers × 2 queues each,
// 40 and 160 queues, the retry topic's besides), one and three in the process, each in
// a group of its own.
func TestGoroutinesDoNotGrowWithQueues(t *testing.T) {
	var opts []fakebroker.Opt
	var topics []string
	for i := range 40 {
		topic := fmt.Sprintf("ScaleTopic%03d", i)
		topics = append(topics, topic)
		opts = append(opts, fakebroker.WithTopic(topic, 2))
	}
	c, err := fakebroker.NewCluster(append(opts, fakebroker.WithBrokers(2))...)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	requests := func(context.Context) (map[int32]int, error) {
		byServer := map[string]map[int32]int{"namesrv": c.NameServer().RequestCounts()}
		for _, b := range c.Brokers() {
			byServer[b.Name()] = b.RequestCounts()
		}
		return SumRequests(byServer), nil
	}

	perConsumer := map[int][]float64{} // consumers → goroutines per consumer, by topic count
	for _, consumers := range []int{1, 3} {
		for _, n := range []int{10, 40} {
			ctx := context.Background()
			res, stop, err := Run(ctx, Config{NameServer: c.NameServerAddr(), Topics: topics[:n], Consumers: consumers,
				GroupPrefix: fmt.Sprintf("scale-%d-%d", consumers, n), Settle: 300 * time.Millisecond, Idle: 500 * time.Millisecond,
				Requests: requests})
			require.NoError(t, err)
			require.NoError(t, stop(ctx))
			require.Equal(t, n*4+2, res.Queues, "every queue, the retry topic's 2 included")
			require.Len(t, res.Start, consumers)
			require.Len(t, res.FirstPass, consumers)
			t.Logf("%d consumers × %d queues: %.1f goroutines per consumer, first pass %v", consumers, res.Queues,
				res.GoroutinesPerConsumer(), res.FirstPass)
			perConsumer[consumers] = append(perConsumer[consumers], res.GoroutinesPerConsumer())
		}
	}
	for consumers, g := range perConsumer {
		// Four times the queues, the same goroutines (give or take one that happens to be
		// running at the count: a timer's callback, a heartbeat to one of the brokers).
		require.InDelta(t, g[0], g[1], 2, "%d consumers: goroutines per consumer with 40 and with 160 queues", consumers)
		require.Less(t, g[1], 45.0, "%d consumers: goroutines per consumer", consumers)
	}
}
