package fakebroker

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// replay sends a captured request's code, version, ext fields and body to addr.
func (c *client) replay(addr string, greq *remoting.Command) *remoting.Command {
	c.t.Helper()
	req := &remoting.Command{Code: greq.Code, Language: greq.Language, Version: greq.Version,
		ExtFields: greq.ExtFields, Body: greq.Body}
	return c.invoke(addr, req)
}

// produceGolden replays a_produce's sends of GoldenTopic (20 messages on 4 queues) and
// checks each answer against the real broker's.
func produceGolden(t *testing.T, c *Cluster, cl *client) {
	t.Helper()
	addr := c.Broker("broker-a").Addr()
	for n := 17; n <= 49; n += 2 {
		greq := golden(t, "a_produce", fmt.Sprintf("%04d", n))
		gresp := golden(t, "a_produce", fmt.Sprintf("%04d", n+1))
		resp := cl.replay(addr, greq)
		require.Equal(t, gresp.Code, resp.Code, "send %04d: %s", n, resp.Remark)
		require.Equal(t, gresp.Remark, resp.Remark)
		require.ElementsMatch(t, keys(gresp), keys(resp), "send %04d", n)
		for _, k := range []string{"queueId", "queueOffset", "MSG_REGION", "TRACE_ON"} {
			require.Equal(t, gresp.ExtFields.Value(k), resp.ExtFields.Value(k), "send %04d: %s", n, k)
		}
		ids := strings.Split(resp.ExtFields.Value("msgId"), ",")
		require.Len(t, ids, len(strings.Split(gresp.ExtFields.Value("msgId"), ",")))
		for _, id := range ids {
			host, _, err := message.ParseOffsetMsgID(id)
			require.NoError(t, err)
			require.Equal(t, addr, host.String())
			require.Equal(t, strings.ToUpper(id), id)
		}
	}
}

func TestGoldenProduceStoresLikeRealBroker(t *testing.T) {
	c := startCluster(t, WithTopic("GoldenTopic", 4))
	cl := newClient(t)
	produceGolden(t, c, cl)
	// The real broker's records, as b_consume_retry pulled them, queue by queue.
	for q, n := range []string{"0019", "0024", "0029", "0036"} {
		want, err := message.DecodeAll(golden(t, "b_consume_retry", n).Body)
		require.NoError(t, err)
		resp := cl.invoke(c.Broker("broker-a").Addr(),
			pullRequest("G", "GoldenTopic", int32(q), 0, 32, protocol.PullSysFlagSubscription, 0, "*"))
		require.Equal(t, protocol.ResponseSuccess, resp.Code)
		_, got := pullResult(t, resp)
		require.Len(t, got, len(want))
		for i := range want {
			w, g := want[i], got[i]
			require.Equal(t, w.Topic, g.Topic)
			require.Equal(t, w.QueueID, g.QueueID)
			require.Equal(t, w.QueueOffset, g.QueueOffset)
			require.Equal(t, w.Flag, g.Flag)
			require.Equal(t, w.SysFlag, g.SysFlag)
			require.Equal(t, w.BornTimestamp, g.BornTimestamp)
			require.Equal(t, w.ReconsumeTimes, g.ReconsumeTimes)
			require.Equal(t, w.BodyCRC, g.BodyCRC)
			require.Equal(t, w.StoreSize, g.StoreSize, "message %s", w.Property("goldenIndex"))
			require.Equal(t, w.Body, g.Body)
			require.Equal(t, w.Properties.String(), g.Properties.String(),
				"properties of message %s, byte for byte (HashMap order, CLUSTER added)", w.Property("goldenIndex"))
			if _, ok := w.Properties.Get(message.PropertyUniqKey); ok {
				require.Equal(t, w.MsgID(), g.MsgID())
			}
		}
	}
}

func TestGoldenAutoCreatedTopic(t *testing.T) {
	c := startCluster(t)
	cl := newClient(t)
	greq, gresp := golden(t, "a_produce", "0013"), golden(t, "a_produce", "0014")
	resp := cl.replay(c.Broker("broker-a").Addr(), greq)
	require.Equal(t, gresp.Code, resp.Code)
	require.ElementsMatch(t, keys(gresp), keys(resp))
	ti, ok := c.Broker("broker-a").Topic("GoldenAutoTopic")
	require.True(t, ok)
	require.Equal(t, TopicInfo{Name: "GoldenAutoTopic", ReadQueues: 4, WriteQueues: 4, Perm: permRW}, ti)
	// The route of TBW102 the Go client read before sending (0011, version 317).
	want := golden(t, "a_produce", "0012")
	got := cl.replay(c.NameServerAddr(), golden(t, "a_produce", "0011"))
	require.Equal(t, strings.ReplaceAll(string(want.Body), "127.0.0.1:10911", c.Broker("broker-a").Addr()), string(got.Body))
}

func TestGoldenRetriedMessage(t *testing.T) {
	c := startCluster(t, WithTopic("GoldenTopic", 4), WithDelayScale(0.001))
	b := c.Broker("broker-a")
	cl := newClient(t)
	produceGolden(t, c, cl)
	// The Go consumer's heartbeat, then its send-back of goldenIndex=5 (queue 2, offset 1).
	resp := cl.replay(b.Addr(), golden(t, "b_consume_retry", "0007"))
	require.Equal(t, golden(t, "b_consume_retry", "0011").Code, resp.Code)
	require.Nil(t, resp.ExtFields)
	notify := cl.nextInbound()
	gnotify := golden(t, "b_consume_retry", "0010")
	require.Equal(t, gnotify.Code, notify.Code)
	require.Equal(t, gnotify.Flag, notify.Flag)
	require.Equal(t, gnotify.ExtFields, notify.ExtFields)
	require.Equal(t, remoting.LanguageJava, notify.Language)
	msgs := b.Messages("GoldenTopic", 2)
	require.Equal(t, "5", msgs[1].Property("goldenIndex"))
	greq := golden(t, "b_consume_retry", "0032")
	fields := append(remoting.Fields(nil), greq.ExtFields...)
	fields.Set("offset", fmt.Sprint(msgs[1].CommitLogOffset))
	resp = cl.replay(b.Addr(), &remoting.Command{Code: greq.Code, Version: greq.Version, ExtFields: fields})
	gresp := golden(t, "b_consume_retry", "0039")
	require.Equal(t, gresp.Code, resp.Code)
	require.Equal(t, keys(gresp), keys(resp))
	// Level 3 (10 s, scaled to 10 ms) later, it is in %RETRY%GoldenGroup.
	require.Eventually(t, func() bool { return len(b.RetryMessages("GoldenGroup")) == 1 }, callTimeout, time.Millisecond)
	wantMsgs, err := message.DecodeAll(golden(t, "b_consume_retry", "0069").Body)
	require.NoError(t, err)
	w, g := wantMsgs[0], b.RetryMessages("GoldenGroup")[0]
	require.Equal(t, w.Topic, g.Topic)
	require.Equal(t, w.QueueID, g.QueueID)
	require.Equal(t, w.QueueOffset, g.QueueOffset)
	require.Equal(t, w.ReconsumeTimes, g.ReconsumeTimes)
	require.Equal(t, w.BornTimestamp, g.BornTimestamp)
	require.Equal(t, w.Body, g.Body)
	require.Equal(t, w.StoreSize, g.StoreSize)
	wantProps := strings.Replace(w.Properties.String(), "7F00000100002A9F000000006B4A15ED", msgs[1].OffsetMsgID(), 1)
	require.Equal(t, wantProps, g.Properties.String(), "same properties, same HashMap order")
	require.Equal(t, msgs[1].OffsetMsgID(), g.Property(message.PropertyOriginMessageID))
}
