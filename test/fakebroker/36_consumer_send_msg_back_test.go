package fakebroker

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

func sendBack(cl *client, addr, group string, offset int64, level, maxTimes int32, version int32) *remoting.Command {
	h := protocol.ConsumerSendMsgBackRequest{Offset: offset, Group: group, DelayLevel: level,
		MaxReconsumeTimes: protocol.Some(maxTimes)}
	req := remoting.NewRequest(protocol.RequestConsumerSendMsgBack, h.Encode(), nil)
	req.Version = version
	return cl.invoke(addr, req)
}

func TestSendBackRetryThenDLQ(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1), WithDelayScale(0.001))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "*", "%RETRY%G", "*")
	cl.send(b.Addr(), "T", 0, "body", "TAGS", "TagA", "UNIQ_KEY", "UK1")
	orig := b.Messages("T", 0)[0]
	// A pull on the retry queue waits for the retried message.
	held := cl.async(b.Addr(), pullRequest("G", "%RETRY%G", 0, 0, 32, protocol.PullSysFlagSuspend, time.Minute, ""))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)

	cur := orig
	for i := int32(0); i < 2; i++ {
		resp := sendBack(cl, b.Addr(), "G", cur.CommitLogOffset, 0, 2, 409)
		require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
		require.Nil(t, resp.ExtFields)
		require.Eventually(t, func() bool { return len(b.RetryMessages("G")) == int(i)+1 }, callTimeout, time.Millisecond)
		cur = b.RetryMessages("G")[i]
		require.Equal(t, "%RETRY%G", cur.Topic)
		require.Equal(t, i+1, cur.ReconsumeTimes)
		require.Equal(t, "body", string(cur.Body))
		require.Equal(t, orig.BornTimestamp, cur.BornTimestamp)
		require.Equal(t, "T", cur.Property(message.PropertyRetryTopic))
		require.Equal(t, orig.OffsetMsgID(), cur.Property(message.PropertyOriginMessageID))
		require.Equal(t, "UK1", cur.Property(message.PropertyUniqKey))
		require.Equal(t, strconv.Itoa(int(3+i)), cur.Property(message.PropertyDelayTimeLevel))
		require.Equal(t, "%RETRY%G", cur.Property(message.PropertyRealTopic))
		require.Equal(t, "0", cur.Property(message.PropertyRealQueueID))
		require.Equal(t, "false", cur.Property(message.PropertyWaitStoreMsgOK))
		require.Equal(t, "TagA", cur.Tags())
		if i == 0 {
			resp := await(t, held)
			require.Equal(t, protocol.ResponseSuccess, resp.Code)
			_, msgs := pullResult(t, resp)
			require.Equal(t, []string{"body"}, bodies(msgs))
		}
	}
	// reconsumeTimes 2 ≥ max 2: dead letter, at once.
	resp := sendBack(cl, b.Addr(), "G", cur.CommitLogOffset, 0, 2, 409)
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	dlq := b.DLQMessages("G")
	require.Len(t, dlq, 1)
	require.Equal(t, "%DLQ%G", dlq[0].Topic)
	require.Equal(t, int32(3), dlq[0].ReconsumeTimes)
	require.Equal(t, "0", dlq[0].Property(message.PropertyDelayTimeLevel))
	require.Equal(t, "T", dlq[0].Property(message.PropertyRetryTopic))
	require.Equal(t, orig.OffsetMsgID(), dlq[0].Property(message.PropertyOriginMessageID))
	ti, ok := b.Topic("%DLQ%G")
	require.True(t, ok)
	require.Equal(t, TopicInfo{Name: "%DLQ%G", ReadQueues: 1, WriteQueues: 1, Perm: permRW}, ti)
	require.Empty(t, b.Scheduled())
}

func TestSendBackLevels(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1), WithDelayLevels(time.Hour, 2*time.Hour))
	b := c.Broker("broker-a")
	cl := newClient(t)
	for i := range 4 {
		cl.send(b.Addr(), "T", 0, strconv.Itoa(i))
	}
	msgs := b.Messages("T", 0)
	tests := []struct {
		name      string
		msg       int
		level     int32
		maxTimes  int32
		version   int32
		scheduled string // DELAY of the scheduled message, or "" for the DLQ
	}{
		{"explicit level", 0, 1, 16, 409, "1"},
		{"level beyond the table is clamped", 1, 7, 16, 409, "2"},
		{"negative level: DLQ", 2, -1, 16, 409, ""},
		{"old client: header max ignored (16 applies)", 3, 1, 0, 100, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := sendBack(cl, b.Addr(), "G", msgs[tt.msg].CommitLogOffset, tt.level, tt.maxTimes, tt.version)
			require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
			if tt.scheduled == "" {
				require.Len(t, b.DLQMessages("G"), 1)
				return
			}
			var found *message.Ext
			for _, m := range b.Scheduled() {
				if string(m.Body) == strconv.Itoa(tt.msg) {
					found = m
				}
			}
			require.NotNil(t, found)
			require.Equal(t, "SCHEDULE_TOPIC_XXXX", found.Topic)
			require.Equal(t, tt.scheduled, found.Property(message.PropertyDelayTimeLevel))
		})
	}
}

func TestSendBackUnknownOffset(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.send(b.Addr(), "T", 0, "x")
	resp := sendBack(cl, b.Addr(), "G", 5, 0, 16, 409)
	require.Equal(t, protocol.ResponseSystemError, resp.Code)
	require.Equal(t, "look message by offset failed, 5", resp.Remark)
}

func TestProducerDelayedMessage(t *testing.T) {
	t.Parallel()
	c := startCluster(t, WithTopic("T", 1), WithDelayLevels(500*time.Millisecond))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "*")
	resp := cl.send(b.Addr(), "T", 0, "later", "DELAY", "1")
	require.Equal(t, int32(0), resp.QueueID)
	require.Empty(t, b.Messages("T", 0))
	require.Len(t, b.Scheduled(), 1)
	held := cl.async(b.Addr(), pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, time.Minute, ""))
	r := await(t, held)
	require.Equal(t, protocol.ResponseSuccess, r.Code)
	_, msgs := pullResult(t, r)
	require.Equal(t, []string{"later"}, bodies(msgs))
	require.Equal(t, "T", msgs[0].Property(message.PropertyRealTopic))
	require.Empty(t, b.Scheduled())
}
