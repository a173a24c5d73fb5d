package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestProducerSendsToTwoBrokers has the peer's producer send single messages (one per
// queue of a topic with 4 queues on each of 2 brokers, one of them compressed) and a
// batch, and reads back what the fake stored: each record decodes with the topic, tags,
// keys, properties, flag and body sent, at the queue and offset the send result names,
// with the ids the send result gave.
func TestProducerSendsToTwoBrokers(t *testing.T) {
	t.Parallel()
	const topic = "conformance-produce"
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic(topic, 4))
	p := startProducer(t, c, uniqueName("conf-producer"))
	ctx := context.Background()

	t.Run("single", func(t *testing.T) {
		large := strings.Repeat("a compressible line of text for zlib; ", 300) // > 4 KiB: the peer compresses it
		var sent []*primitive.Message
		for i := range 8 {
			body := fmt.Sprintf("single-%d", i)
			if i == 3 {
				body = large
			}
			if i == 5 {
				body = "ünïcödé body – 消息"
			}
			m := primitive.NewMessage(topic, []byte(body))
			m.WithTag(fmt.Sprintf("tag-%d", i%2))
			m.WithKeys([]string{fmt.Sprintf("key-%d", i), "shared-key"})
			m.WithProperty("userProp", fmt.Sprintf("value-%d", i))
			m.WithProperty("unicodeProp", "värde")
			m.Flag = int32(i * 7)
			sent = append(sent, m)
		}
		seen := make(map[message.Queue]int)
		for i, m := range sent {
			before := time.Now().UnixMilli()
			res, err := p.SendSync(ctx, m)
			require.NoError(t, err, "send %d", i)
			require.Equal(t, primitive.SendOK, res.Status)
			require.Equal(t, m.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex), res.MsgID)
			require.NotEmpty(t, res.OffsetMsgID)
			b := c.Broker(res.MessageQueue.BrokerName)
			require.NotNil(t, b, "send result names broker %q", res.MessageQueue.BrokerName)
			q := message.Queue{Topic: topic, BrokerName: b.Name(), QueueID: int32(res.MessageQueue.QueueId)}
			seen[q]++

			got := storedAt(t, b, topic, res.MessageQueue.QueueId, res.QueueOffset)
			require.Equal(t, topic, got.Topic)
			require.Equal(t, string(m.Body), string(got.Body), "send %d: body", i)
			require.Equal(t, fmt.Sprintf("tag-%d", i%2), got.Tags())
			require.Equal(t, []string{fmt.Sprintf("key-%d", i), "shared-key"}, got.Keys())
			require.Equal(t, fmt.Sprintf("value-%d", i), got.Property("userProp"))
			require.Equal(t, "värde", got.Property("unicodeProp"))
			require.Equal(t, fakebroker.DefaultClusterName, got.Property("CLUSTER"))
			require.Equal(t, m.Flag, got.Flag)
			require.Equal(t, res.MsgID, got.Property("UNIQ_KEY"))
			require.Equal(t, res.MsgID, got.MsgID())
			require.Equal(t, res.OffsetMsgID, got.OffsetMsgID())
			require.Equal(t, b.Addr(), got.StoreHost.String())
			require.True(t, got.BornHost.Addr().IsLoopback(), "born host %s", got.BornHost)
			require.GreaterOrEqual(t, got.BornTimestamp, before)
			require.LessOrEqual(t, got.BornTimestamp, time.Now().UnixMilli())
			require.EqualValues(t, 0, got.ReconsumeTimes)
			if i == 3 {
				require.Less(t, int(got.StoreSize), len(large)/4, "the compressed body was stored compressed")
			}
		}
		// The peer's round-robin selector puts one message in each of the 8 queues of the
		// route the fake's name server gave it.
		require.Len(t, seen, 8, "queues used: %v", seen)
		for _, b := range c.Brokers() {
			require.Equal(t, 4, b.Requests(codeSendMessage), "SEND_MESSAGE requests on %s", b.Name())
		}
		require.Positive(t, c.NameServer().Requests(codeGetRouteInfoByTopic))
	})

	t.Run("batch", func(t *testing.T) {
		var batch []*primitive.Message
		for i := range 5 {
			m := primitive.NewMessage(topic, []byte(fmt.Sprintf("batch-%d", i)))
			m.WithTag("batched")
			m.WithKeys([]string{fmt.Sprintf("bkey-%d", i)})
			m.WithProperty("position", fmt.Sprint(i))
			batch = append(batch, m)
		}
		res, err := p.SendSync(ctx, batch...)
		require.NoError(t, err)
		require.Equal(t, primitive.SendOK, res.Status)
		b := c.Broker(res.MessageQueue.BrokerName)
		require.NotNil(t, b)
		require.Equal(t, 1, c.Brokers()[0].Requests(codeSendBatchMessage)+c.Brokers()[1].Requests(codeSendBatchMessage))

		// The answer's msgId is the entries' offsetMsgIds joined by commas and its
		// queueOffset the first entry's; the peer passes both through.
		ids := strings.Split(res.OffsetMsgID, ",")
		require.Len(t, ids, len(batch))
		for i, m := range batch {
			got := storedAt(t, b, topic, res.MessageQueue.QueueId, res.QueueOffset+int64(i))
			require.Equal(t, string(m.Body), string(got.Body))
			require.Equal(t, "batched", got.Tags())
			require.Equal(t, []string{fmt.Sprintf("bkey-%d", i)}, got.Keys())
			require.Equal(t, fmt.Sprint(i), got.Property("position"))
			require.Equal(t, fakebroker.DefaultClusterName, got.Property("CLUSTER"))
			require.Equal(t, ids[i], got.OffsetMsgID())
			// The peer sets no UNIQ_KEY on batch entries and a 4.9.8 broker adds none, so
			// the message id falls back to the offsetMsgId.
			require.Empty(t, got.Property("UNIQ_KEY"))
			require.Equal(t, ids[i], got.MsgID())
		}
	})

	t.Run("oneway", func(t *testing.T) {
		m := primitive.NewMessage(topic, []byte("oneway"))
		m.WithTag("ow")
		require.NoError(t, p.SendOneWay(ctx, m))
		require.True(t, assertEventually(func() bool {
			for _, got := range c.Messages(topic) {
				if string(got.Body) == "oneway" {
					return got.Tags() == "ow"
				}
			}
			return false
		}), "the oneway message was never stored")
	})
}

// storedAt returns the message the fake stored at offset of a queue.
func storedAt(t *testing.T, b *fakebroker.Broker, topic string, queueID int, offset int64) *message.Ext {
	t.Helper()
	for _, m := range b.Messages(topic, queueID) {
		if m.QueueOffset == offset {
			return m
		}
	}
	require.Failf(t, "message not stored", "%s has no message at offset %d of %s queue %d", b.Name(), offset, topic, queueID)
	return nil
}
