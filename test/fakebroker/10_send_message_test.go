package fakebroker

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

func TestSendStoresTheMessage(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2))
	b := c.Broker("broker-a")
	cl := newClient(t)
	h := cl.send(b.Addr(), "T", 1, "hello", "TAGS", "TagA", "KEYS", "k1 k2", "UNIQ_KEY", "ABC", "WAIT", "true")
	require.Equal(t, int32(1), h.QueueID)
	require.Equal(t, int64(0), h.QueueOffset)
	require.Equal(t, "DefaultRegion", h.MsgRegion)
	require.Equal(t, protocol.Some(true), h.TraceOn)
	msgs := b.Messages("T", 1)
	require.Len(t, msgs, 1)
	m := msgs[0]
	require.Equal(t, h.MsgID, m.OffsetMsgID())
	require.Equal(t, "ABC", m.MsgID())
	require.Equal(t, "hello", string(m.Body))
	require.Equal(t, map[string]string{"TAGS": "TagA", "KEYS": "k1 k2", "UNIQ_KEY": "ABC", "CLUSTER": "DefaultCluster"}, m.Properties.Map())
	require.Equal(t, b.Addr(), m.StoreHost.String())
	require.Equal(t, "broker-a", m.BrokerName)
	require.NotEqual(t, b.Addr(), m.BornHost.String(), "born host is the client's address")
	require.Equal(t, "127.0.0.1", m.BornHost.Addr().String())
	// The second message follows in the commit log.
	h2 := cl.send(b.Addr(), "T", 1, "again")
	require.Equal(t, int64(1), h2.QueueOffset)
	m2 := b.Messages("T", 1)[1]
	require.Equal(t, m.CommitLogOffset+int64(m.StoreSize), m2.CommitLogOffset)
}

func TestSendV2AndRandomQueue(t *testing.T) {
	c := startCluster(t, WithTopic("T", 4))
	b := c.Broker("broker-a")
	cl := newClient(t, remoting.SerializeRocketMQ)
	h := protocol.SendMessageRequest{ProducerGroup: "pg", Topic: "T", DefaultTopic: autoCreateTopic,
		DefaultTopicQueueNums: 4, QueueID: -1, Properties: "TAGS\x01x"}
	resp := cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestSendMessageV2, h.EncodeV2(), []byte("v2")))
	require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	require.Equal(t, remoting.SerializeRocketMQ, resp.Serialize)
	var r protocol.SendMessageResponse
	require.NoError(t, r.Decode(resp.ExtFields))
	require.GreaterOrEqual(t, r.QueueID, int32(0))
	require.Less(t, r.QueueID, int32(4))
	require.Equal(t, "v2", string(b.Messages("T", int(r.QueueID))[0].Body))
}

func TestSendErrors(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2), WithMaxMessageSize(2048))
	b := c.Broker("broker-a")
	cl := newClient(t)
	faq := "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
	tests := []struct {
		name   string
		req    *remoting.Command
		code   int32
		remark string
	}{
		{"queue beyond", sendRequest("T", 2, "x"), protocol.ResponseSystemError, "request queueId[2] is illegal, TopicConfig [topicName=T, readQueueNums=2, writeQueueNums=2, perm=RW-, topicFilterType=SINGLE_TAG, topicSysFlag=0, order=false] Producer: 127.0.0.1:"},
		{"bad topic", sendRequest("a b", 0, "x"), protocol.ResponseSystemError, "The specified topic contains illegal characters"},
		{"long topic", sendRequest(strings.Repeat("t", 128), 0, "x"), protocol.ResponseSystemError, "The specified topic is longer than topic max length."},
		{"forbidden topic", sendRequest("SCHEDULE_TOPIC_XXXX", 0, "x"), protocol.ResponseNoPermission, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."},
		{"no default topic", withField(sendRequest("New", 0, "x"), "defaultTopic", "T"), protocol.ResponseTopicNotExist, "topic[New] not exist, apply first please!" + faq},
		{"too big", sendRequest("T", 0, strings.Repeat("x", 3000)), protocol.ResponseMessageIllegal, remarkMessageIllegal},
		{"transaction", sendRequest("T", 0, "x", "TRAN_MSG", "true"), protocol.ResponseNoPermission, "the broker[127.0.0.1] sending transaction message is forbidden"},
		{"missing field", withoutField(sendRequest("T", 0, "x"), "queueId"), protocol.ResponseSystemError, "org.apache.rocketmq.remoting.exception.RemotingCommandException: the custom field <queueId> is null"},
		{"bad number", withField(sendRequest("T", 0, "x"), "queueId", "zero"), protocol.ResponseSystemError, `java.lang.NumberFormatException: For input string: "zero"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := cl.invoke(b.Addr(), tt.req)
			require.Equal(t, tt.code, resp.Code, resp.Remark)
			require.True(t, strings.HasPrefix(resp.Remark, tt.remark), resp.Remark)
		})
	}
	require.Empty(t, b.Messages("T", 0))
}

func withoutField(req *remoting.Command, k string) *remoting.Command {
	req.ExtFields.Delete(k)
	return req
}

func TestAutoCreateTopic(t *testing.T) {
	t.Run("on", func(t *testing.T) {
		c := startCluster(t)
		b := c.Broker("broker-a")
		cl := newClient(t)
		req := sendRequest("New", 3, "x")
		req.ExtFields.Set("defaultTopicQueueNums", "16")
		resp := cl.invoke(b.Addr(), req)
		require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
		ti, ok := b.Topic("New")
		require.True(t, ok)
		require.Equal(t, TopicInfo{Name: "New", ReadQueues: 8, WriteQueues: 8, Perm: permRW}, ti, "min(16, TBW102's 8)")
	})
	t.Run("off", func(t *testing.T) {
		c := startCluster(t, WithAutoCreateTopics(false))
		b := c.Broker("broker-a")
		cl := newClient(t)
		resp := cl.invoke(b.Addr(), sendRequest("New", 0, "x"))
		require.Equal(t, protocol.ResponseTopicNotExist, resp.Code)
		_, ok := b.Topic(autoCreateTopic)
		require.False(t, ok)
		resp = cl.invoke(c.NameServerAddr(), routeRequest(autoCreateTopic, 409, false))
		require.Equal(t, protocol.ResponseTopicNotExist, resp.Code)
	})
}

func TestSendToRetryTopicPastMaxGoesToDLQ(t *testing.T) {
	c := startCluster(t)
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 1)
	req := sendRequest("%RETRY%G", 0, "x", "RETRY_TOPIC", "T")
	req.ExtFields.Set("reconsumeTimes", "17")
	resp := cl.invoke(b.Addr(), req)
	require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	dlq := b.DLQMessages("G")
	require.Len(t, dlq, 1)
	require.Equal(t, "-1", dlq[0].Property(message.PropertyDelayTimeLevel))
	require.Equal(t, int32(17), dlq[0].ReconsumeTimes)
}

func TestSendBatch(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2))
	b := c.Broker("broker-a")
	cl := newClient(t)
	var msgs []*message.Message
	for i, tag := range []string{"A", "B", "C"} {
		m := &message.Message{Body: []byte(tag), Flag: int32(i)}
		m.Properties.Set("TAGS", tag)
		msgs = append(msgs, m)
	}
	msgs = append(msgs, &message.Message{Body: []byte("none"), Flag: 3})
	body, err := message.EncodeBatch(msgs)
	require.NoError(t, err)
	h := protocol.SendMessageRequest{ProducerGroup: "pg", Topic: "T", DefaultTopic: autoCreateTopic,
		DefaultTopicQueueNums: 4, QueueID: 1, Batch: true, BornTimestamp: 1234}
	resp := cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestSendBatchMessage, h.EncodeV2(), body))
	require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	var r protocol.SendMessageResponse
	require.NoError(t, r.Decode(resp.ExtFields))
	require.Equal(t, int64(0), r.QueueOffset)
	stored := b.Messages("T", 1)
	require.Len(t, stored, 4)
	var ids []string
	for i, m := range stored {
		ids = append(ids, m.OffsetMsgID())
		require.Equal(t, int64(i), m.QueueOffset)
		require.Equal(t, int64(1234), m.BornTimestamp)
		require.Equal(t, int32(i), m.Flag)
	}
	require.Equal(t, strings.Join(ids, ","), r.MsgID)
	require.Equal(t, "TAGS\x01A\x02CLUSTER\x01DefaultCluster", stored[0].Properties.String())
	require.Equal(t, "CLUSTER\x01DefaultCluster", stored[3].Properties.String())
	// Bad bodies and the retry topic are refused.
	resp = cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestSendBatchMessage, h.EncodeV2(), []byte{0, 0, 0, 9}))
	require.Equal(t, protocol.ResponseMessageIllegal, resp.Code)
	h.Topic = "%RETRY%G"
	resp = cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestSendBatchMessage, h.EncodeV2(), body))
	require.Equal(t, protocol.ResponseMessageIllegal, resp.Code)
	require.Equal(t, "batch request does not support retry group %RETRY%G", resp.Remark)
}

func TestUpdateAndCreateTopic(t *testing.T) {
	c := startCluster(t)
	b := c.Broker("broker-a")
	cl := newClient(t)
	greq, gresp := golden(t, "a_produce", "0005"), golden(t, "a_produce", "0006")
	resp := cl.replay(b.Addr(), greq)
	require.Equal(t, gresp.Code, resp.Code)
	require.Equal(t, gresp.Remark, resp.Remark)
	ti, ok := b.Topic("GoldenTopic")
	require.True(t, ok)
	require.Equal(t, TopicInfo{Name: "GoldenTopic", ReadQueues: 4, WriteQueues: 4, Perm: permRW}, ti)
}
