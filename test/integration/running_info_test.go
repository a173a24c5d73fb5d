package integration

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// The running info (mqadmin consumerStatus) carries what a Java 4.9.8 consumer's does
// (its answer in ../shared/golden/d_admin_running_consumer, frame 0246): every property
// Java reports, the subscriptions, the queues, a status line per subscribed topic, and a
// goroutine dump where Java gives its jstack when the admin asks for it.
func TestRunningInfoAsJava(t *testing.T) {
	raw, err := os.ReadFile("testdata/d_admin_running_consumer/0246-c2s-resp-GET_CONSUMER_RUNNING_INFO.bin")
	require.NoError(t, err)
	frame, err := remoting.DecodeFrame(raw)
	require.NoError(t, err)
	var java protocol.ConsumerRunningInfo
	require.NoError(t, java.Decode(frame.Body))
	require.Len(t, java.Properties, 33)

	c := newCluster(t, fakebroker.WithTopic("t", 4))
	b := c.Brokers()[0]
	want := produce(t, c, "t", "m", 20, "")
	got := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "every message", func() bool { return got.distinct() == len(want) })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := b.ConsumerRunningInfo(ctx, "g", pc.ClientID(), true)
	require.NoError(t, err)
	for k := range java.Properties {
		require.Contains(t, info.Properties, k, "Java's property %s", k)
	}
	for _, k := range []string{"PROP_CONSUMEORDERLY", "PROP_CONSUME_TYPE", "PROP_CONSUMER_START_TIMESTAMP", "PROP_CLIENT_VERSION", "consumeFromWhere", "messageModel"} {
		require.NotEmpty(t, info.Properties[k], k)
	}
	require.Equal(t, java.Properties["consumeThreadMin"], info.Properties[protocol.PropThreadPoolCoreSize], "20 workers, as Java's 20 threads")
	require.Equal(t, "{t=*}", info.Properties["subscription"])
	require.Len(t, info.Properties["consumeTimestamp"], len(java.Properties["consumeTimestamp"]), "yyyyMMddHHmmss")
	require.Equal(t, java.Properties["maxReconsumeTimes"], info.Properties["maxReconsumeTimes"], "-1: the default")

	var topics []string
	for _, sd := range info.SubscriptionSet {
		topics = append(topics, sd.Topic)
	}
	require.ElementsMatch(t, []string{"t", "%RETRY%g"}, topics)
	require.ElementsMatch(t, topics, slices.Collect(maps.Keys(info.StatusTable)), "a status line per subscribed topic, as Java")
	require.Len(t, info.MQTable, 5)
	var committed int64
	for q, pqi := range info.MQTable {
		if q.Topic == "t" {
			committed += pqi.CommitOffset
		}
	}
	require.Equal(t, int64(len(want)), committed)
	st := info.StatusTable["t"]
	require.Greater(t, st.PullTPS, 0.0, "rates from the first pull on, before the first 10 s sample")
	require.Greater(t, st.ConsumeOKTPS, 0.0)
	require.Greater(t, st.PullRT, 0.0)
	require.True(t, strings.HasPrefix(info.Jstack, "goroutine "), "a goroutine dump")
	require.Contains(t, info.Jstack, "github.com/rmqpush/rmqpush/pull.(*Service).run")

	info, err = b.ConsumerRunningInfo(ctx, "g", pc.ClientID(), false)
	require.NoError(t, err)
	require.Empty(t, info.Jstack, "only when asked, as Java")
}
