package fakebroker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

func TestHeartbeatJoinNotifiesEveryMember(t *testing.T) {
	c := startCluster(t, WithTopic("T", 4))
	b := c.Broker("broker-a")
	c1, c2 := newClient(t), newClient(t)
	c1.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
	n := c1.nextInbound()
	require.Equal(t, protocol.RequestNotifyConsumerIDsChanged, n.Code)
	require.True(t, n.IsOneway())
	require.Equal(t, "G", n.ExtFields.Value("consumerGroup"))
	require.Equal(t, remoting.SerializeJSON, n.Serialize)
	// The same heartbeat again changes nothing: no notification.
	c1.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
	c1.noInbound()
	// A second member: both are told.
	c2.heartbeat(b.Addr(), "c2", "G", 1, "T", "*")
	require.Equal(t, protocol.RequestNotifyConsumerIDsChanged, c1.nextInbound().Code)
	require.Equal(t, protocol.RequestNotifyConsumerIDsChanged, c2.nextInbound().Code)
	require.Equal(t, []string{"c1", "c2"}, b.Clients("G"))
	// A new topic is a change too; a newer subVersion of the same topics is not.
	c2.heartbeat(b.Addr(), "c2", "G", 2, "T", "TagA")
	c1.noInbound()
	c2.heartbeat(b.Addr(), "c2", "G", 2, "T", "TagA", "%RETRY%G", "*")
	require.Equal(t, protocol.RequestNotifyConsumerIDsChanged, c1.nextInbound().Code)
	require.Equal(t, protocol.RequestNotifyConsumerIDsChanged, c2.nextInbound().Code)
}

func TestHeartbeatKeepsHighestSubVersion(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "c1", "G", 20, "T", "TagA")
	cl.heartbeat(b.Addr(), "c1", "G", 10, "T", "TagB")
	subs := b.Subscriptions("G")
	require.Len(t, subs, 1)
	require.Equal(t, "TagA", subs[0].Expression)
	require.Equal(t, int64(20), subs[0].SubVersion)
	cl.heartbeat(b.Addr(), "c1", "G", 30, "T", "TagB")
	require.Equal(t, "TagB", b.Subscriptions("G")[0].Expression)
	hb, ok := b.LastHeartbeat("G")
	require.True(t, ok)
	require.Equal(t, "c1", hb.ClientID)
	require.Equal(t, "GO", hb.Language)
	require.Equal(t, "CONSUME_PASSIVELY", hb.ConsumeType)
	require.Equal(t, int64(30), hb.Subscriptions[0].SubVersion)
	// The retry topic exists from the first heartbeat.
	ti, ok := b.Topic("%RETRY%G")
	require.True(t, ok)
	require.Equal(t, TopicInfo{Name: "%RETRY%G", ReadQueues: 1, WriteQueues: 1, Perm: permRW}, ti)
}

func TestUnregisterNotifiesTheOthers(t *testing.T) {
	c := startCluster(t, WithTopic("T", 4))
	b := c.Broker("broker-a")
	c1, c2 := newClient(t), newClient(t)
	c1.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
	c2.heartbeat(b.Addr(), "c2", "G", 1, "T", "*")
	c1.nextInbound()
	c1.nextInbound()
	c2.nextInbound()
	h := protocol.UnregisterClientRequest{ClientID: "c2", ConsumerGroup: "G"}
	resp := c2.invoke(b.Addr(), remoting.NewRequest(protocol.RequestUnregisterClient, h.Encode(), nil))
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	require.NotNil(t, resp.ExtFields)
	require.Empty(t, resp.ExtFields)
	require.Equal(t, protocol.RequestNotifyConsumerIDsChanged, c1.nextInbound().Code)
	c2.noInbound()
	require.Equal(t, []string{"c1"}, b.Clients("G"))
	// The last member leaves: the group is gone; the consumer list says so.
	h = protocol.UnregisterClientRequest{ClientID: "c1", ConsumerGroup: "G"}
	c1.invoke(b.Addr(), remoting.NewRequest(protocol.RequestUnregisterClient, h.Encode(), nil))
	lh := protocol.GetConsumerListByGroupRequest{ConsumerGroup: "G"}
	resp = c1.invoke(b.Addr(), remoting.NewRequest(protocol.RequestGetConsumerListByGroup, lh.Encode(), nil))
	require.Equal(t, protocol.ResponseSystemError, resp.Code)
	require.Equal(t, "no consumer for this group, G", resp.Remark)
}

func TestClosedConnectionNotifiesTheOthers(t *testing.T) {
	c := startCluster(t, WithTopic("T", 4))
	b := c.Broker("broker-a")
	c1, c2 := newClient(t), newClient(t)
	c1.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
	c2.heartbeat(b.Addr(), "c2", "G", 1, "T", "*")
	c1.nextInbound()
	c1.nextInbound()
	c2.nextInbound()
	c2.cl.CloseConn(b.Addr())
	require.Equal(t, protocol.RequestNotifyConsumerIDsChanged, c1.nextInbound().Code)
	require.Eventually(t, func() bool { return len(b.Clients("G")) == 1 }, callTimeout, time.Millisecond)
}

func TestSilentClientExpiresWithoutNotification(t *testing.T) {
	t.Parallel()
	c := startCluster(t, WithTopic("T", 4), WithClientExpiry(time.Second))
	b := c.Broker("broker-a")
	c1, c2 := newClient(t), newClient(t)
	c1.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
	c2.heartbeat(b.Addr(), "c2", "G", 1, "T", "*")
	c1.nextInbound()
	c1.nextInbound()
	c2.nextInbound()
	// c1 keeps heartbeating, c2 falls silent.
	deadline := time.Now().Add(callTimeout)
	for len(b.Clients("G")) == 2 && time.Now().Before(deadline) {
		c1.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, []string{"c1"}, b.Clients("G"))
	// 4.9.8 closes the silent client's connection and tells no one.
	select {
	case addr := <-c2.closed:
		require.Equal(t, b.Addr(), addr)
	case <-time.After(callTimeout):
		t.Fatal("the silent client's connection stayed open")
	}
	c1.noInbound()
}

func TestGoldenHeartbeatAndConsumerList(t *testing.T) {
	c := startCluster(t, WithTopic("GoldenTopic", 4))
	b := c.Broker("broker-a")
	cl := newClient(t)
	resp := cl.replay(b.Addr(), golden(t, "b_consume_retry", "0007"))
	want := golden(t, "b_consume_retry", "0011")
	require.Equal(t, want.Code, resp.Code)
	require.Equal(t, keys(want), keys(resp))
	require.Equal(t, want.Remark, resp.Remark)
	cl.nextInbound()
	resp = cl.replay(b.Addr(), golden(t, "b_consume_retry", "0012"))
	want = golden(t, "b_consume_retry", "0013")
	require.Equal(t, want.Code, resp.Code)
	require.Equal(t, keys(want), keys(resp))
	require.Equal(t, string(want.Body), string(resp.Body))
	// Go's subVersion is in nanoseconds: kept exactly.
	require.Equal(t, int64(1796009514646227664), b.Subscriptions("GoldenGroup")[1].SubVersion)
}

func TestBadHeartbeatBody(t *testing.T) {
	c := startCluster(t)
	b := c.Broker("broker-a")
	cl := newClient(t, remoting.SerializeRocketMQ)
	resp := cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestHeartBeat, nil, []byte(`{"clientID":`)))
	require.Equal(t, protocol.ResponseSystemError, resp.Code)
	require.Contains(t, resp.Remark, "com.alibaba.fastjson.JSONException")
	require.Equal(t, remoting.SerializeJSON, resp.Serialize, "4.9.8's catch-all answers in JSON")
}
