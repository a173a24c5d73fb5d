package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestRetryThenDLQ has a peer listener answer RECONSUME_LATER for some messages, with
// the peer's max reconsume times at 2. The peer sends each failed message back
// (CONSUMER_SEND_MSG_BACK, delay level 0, so the broker picks 3 + reconsumeTimes); the
// fake writes it through its (scaled-down) delay levels to %RETRY%<group> on the broker
// that held it, the peer pulls it from there and gets it back as the original topic, and
// after the third failure the fake puts it in %DLQ%<group>. The other messages are
// consumed once and never retried, and the group's offsets reach the max offsets of both
// the topic's queues and the retry queues.
//
// The peer learns a topic's route at Start and then only from its 30 s route poll
// (internal/client.go _PullNameServerInterval, a constant with no option). A 4.9.8
// broker creates a group's retry topic on the group's first heartbeat, which the peer
// sends after its Start-time route lookup: a brand-new group would find its retry queue
// only at the next poll, 30 s later (or by luck, if the poll 10 ms after Start comes
// after the heartbeat). The test starts the cluster with the retry topic already there,
// as it is on a real cluster for any group that has run before.
func TestRetryThenDLQ(t *testing.T) {
	t.Parallel()
	const topic = "conformance-retry"
	group := uniqueName("conf-retry")
	c := newCluster(t,
		fakebroker.WithBrokers(2),
		fakebroker.WithTopic(topic, 2),
		fakebroker.WithTopic(fakebroker.RetryTopic(group), 1),
		fakebroker.WithDelayScale(0.001), // level 3 (10 s) takes 10 ms, level 4 (30 s) 30 ms
	)
	var col collector
	instance := group + "-1"
	fail := func(m *primitive.MessageExt) consumer.ConsumeResult {
		if strings.HasPrefix(string(m.Body), "fail-") {
			return consumer.ConsumeRetryLater
		}
		return consumer.ConsumeSuccess
	}
	startConsumer(t, c, group, instance, topic, col.listener(instance, fail),
		consumer.WithMaxReconsumeTimes(2))

	var failing, passing []*message.Message
	for i := range 4 {
		failing = append(failing, &message.Message{Body: []byte(fmt.Sprintf("fail-%d", i))})
		passing = append(passing, &message.Message{Body: []byte(fmt.Sprintf("ok-%d", i))})
	}
	produced, err := c.Produce(topic, append(slices.Clone(failing), passing...)...)
	require.NoError(t, err)
	origin := make(map[string]fakebroker.Produced) // body → where it was stored
	for i, m := range append(slices.Clone(failing), passing...) {
		origin[string(m.Body)] = produced[i]
	}

	// Every failing message ends in the DLQ of the broker that held it.
	ok := assertEventually(func() bool { return len(c.DLQMessages(group)) == len(failing) })
	require.True(t, ok, "DLQ holds %d messages, want %d; deliveries so far: %d",
		len(c.DLQMessages(group)), len(failing), len(col.deliveries()))

	got := col.byBody()
	var gaps [2][]time.Duration
	for _, m := range failing {
		body := string(m.Body)
		org := origin[body]
		ds := got[body]
		require.Len(t, ds, 3, "%s: consumed once and reconsumed twice", body)
		for n, d := range ds {
			require.EqualValues(t, n, d.reconsumeTimes, "%s delivery %d", body, n)
			require.Equal(t, topic, d.topic, "the peer hands a retried message over with its original topic")
			require.Equal(t, org.Queue.BrokerName, d.broker, "%s is retried on the broker that held it", body)
			if n == 0 {
				require.Equal(t, org.MsgID, d.msgID)
				continue
			}
			require.Equal(t, topic, d.props["RETRY_TOPIC"])
			// 4.9.8 looks the message up by commit-log offset and takes the id of what it
			// decodes, the offsetMsgId, when the message has no ORIGIN_MESSAGE_ID yet
			// (AbstractSendMessageProcessor.consumerSendMsgBack); the header's originMsgId,
			// the UNIQ_KEY the peer sends, is not what it stores.
			require.Equal(t, org.OffsetMsgID, d.props["ORIGIN_MESSAGE_ID"])
			require.Equal(t, org.MsgID, d.msgID, "a retried message keeps its UNIQ_KEY")
			gaps[n-1] = append(gaps[n-1], d.at.Sub(ds[n-1].at))
		}
	}
	t.Logf("time from a failure to the next delivery: after the 1st (level 3, 10 ms) %v; after the 2nd (level 4, 30 ms) %v", gaps[0], gaps[1])

	for _, m := range passing {
		require.Len(t, got[string(m.Body)], 1, "%s consumed once", m.Body)
	}

	// What the fake stored: two retries per failing message, then one dead letter.
	retries := make(map[string][]int32)
	for _, m := range c.RetryMessages(group) {
		retries[string(m.Body)] = append(retries[string(m.Body)], m.ReconsumeTimes)
		require.Equal(t, topic, m.Property("RETRY_TOPIC"))
		require.Equal(t, origin[string(m.Body)].Queue.BrokerName, m.BrokerName)
	}
	for _, b := range c.Brokers() {
		var dlq int
		for _, m := range b.DLQMessages(group) {
			dlq++
			org := origin[string(m.Body)]
			require.Equal(t, org.Queue.BrokerName, b.Name(), "%s in the DLQ of %s", m.Body, b.Name())
			require.EqualValues(t, 3, m.ReconsumeTimes, "%s: the DLQ copy counts the third failure", m.Body)
			require.Equal(t, topic, m.Property("RETRY_TOPIC"))
			require.Equal(t, org.OffsetMsgID, m.Property("ORIGIN_MESSAGE_ID"))
			require.Equal(t, org.MsgID, m.MsgID())
		}
		if dlq > 0 {
			ti, ok := b.Topic(fakebroker.DLQTopic(group))
			require.True(t, ok)
			require.Equal(t, fakebroker.PermRead|fakebroker.PermWrite, ti.Perm, "4.9.8 creates a DLQ topic readable and writable")
			require.Equal(t, 1, ti.ReadQueues)
		}
		// Every send-back went through CONSUMER_SEND_MSG_BACK: no fall-back SEND_MESSAGE.
		require.Zero(t, b.Requests(codeSendMessage), "fall-back sends to %s", b.Name())
	}
	for _, m := range failing {
		require.ElementsMatch(t, []int32{1, 2}, retries[string(m.Body)], "%s in %%RETRY%%", m.Body)
	}
	require.Equal(t, 3*len(failing),
		c.Brokers()[0].Requests(codeConsumerSendMsgBack)+c.Brokers()[1].Requests(codeConsumerSendMsgBack))

	waitCommitted(t, c, group, topic)
	waitCommitted(t, c, group, fakebroker.RetryTopic(group))
}
