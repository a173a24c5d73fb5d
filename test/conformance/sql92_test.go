package conformance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// codeCheckClientConfig is Java's RequestCode.CHECK_CLIENT_CONFIG, which only Java's
// consumer sends.
const codeCheckClientConfig = 46

// TestPeerSQL92GetsExactlyTheSelected: the peer's producer sends orders with user
// properties, and the peer's push consumer subscribed with an SQL92 selector gets
// exactly the orders the expression selects from the fake brokers (with
// enablePropertyFilter), as it did from a real 4.9.8 broker in the golden run h_sql92:
// it sends no CHECK_CLIENT_CONFIG, registers the expression by heartbeat and pulls with
// expressionType TAG and subVersion 0, and the brokers filter by the heartbeat's
// expression.
func TestPeerSQL92GetsExactlyTheSelected(t *testing.T) {
	t.Parallel()
	const (
		topic = "conformance-sql92"
		expr  = "region IN ('eu', 'us') AND amount > 100"
	)
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic(topic, 4), fakebroker.WithPropertyFilter(true))
	p := startProducer(t, c, uniqueName("conf-sql92-producer"))
	regions := []string{"eu", "us", "asia", "EU"}
	amounts := []string{"50", "150", "101", "100", "150.5", "abc", "250"}
	var want []string
	for i := range 112 {
		region, amount := regions[i%len(regions)], amounts[i%len(amounts)]
		body := fmt.Sprintf("order-%d", i)
		m := primitive.NewMessage(topic, []byte(body))
		m.WithProperty("region", region)
		m.WithProperty("amount", amount)
		res, err := p.SendSync(context.Background(), m)
		require.NoError(t, err)
		require.Equal(t, primitive.SendOK, res.Status)
		// Selected: the region is listed and amount reads as a Java int above 100.
		if n, err := strconv.ParseInt(amount, 10, 32); err == nil && n > 100 && (region == "eu" || region == "us") {
			want = append(want, body)
		}
	}
	require.Len(t, want, 24)

	if raceDetector {
		t.Skip(peerRaces)
	}
	group := uniqueName("conf-sql92")
	var col collector
	pc, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer([]string{c.NameServerAddr()}),
		consumer.WithGroupName(group),
		consumer.WithInstance(group),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.SQL92, Expression: expr},
		col.listener(group, nil)))
	require.NoError(t, pc.Start())
	peer := &peerConsumer{PushConsumer: pc, group: group, instance: group}
	t.Cleanup(func() { peer.stop(t) })

	col.waitAll(t, want)
	// Then one selected sentinel at the end of each queue: once they are all consumed,
	// every queue was read to its end.
	var sentinels []string
	for _, b := range c.Brokers() {
		for q := range 4 {
			body := fmt.Sprintf("sentinel-%s-%d", b.Name(), q)
			m := &message.Message{Body: []byte(body)}
			m.Properties.Set("region", "us")
			m.Properties.Set("amount", "1000")
			_, err := b.Produce(topic, q, m)
			require.NoError(t, err)
			sentinels = append(sentinels, body)
		}
	}
	col.waitAll(t, sentinels)
	want = append(want, sentinels...)
	var got []string
	for body, ds := range col.byBody() {
		require.Len(t, ds, 1, "%s delivered twice", body)
		got = append(got, body)
	}
	slices.Sort(got)
	slices.Sort(want)
	require.Equal(t, want, got)
	for _, d := range col.deliveries() {
		require.Equal(t, topic, d.topic)
	}

	for _, b := range c.Brokers() {
		require.Zero(t, b.Requests(codeCheckClientConfig), "the peer sends no CHECK_CLIENT_CONFIG")
		hb, ok := b.LastHeartbeat(group)
		require.True(t, ok)
		var found bool
		for _, s := range hb.Subscriptions {
			if s.Topic == topic {
				found = true
				require.Equal(t, "SQL92", s.ExpressionType)
				require.Equal(t, expr, s.Expression)
			}
		}
		require.True(t, found, "heartbeat of %s on %s", group, b.Name())
	}
}
