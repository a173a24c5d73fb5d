package fakebroker

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

func routeRequest(topic string, version int32, standard bool) *remoting.Command {
	h := protocol.GetRouteInfoRequest{Topic: topic, AcceptStandardJSONOnly: standard}
	req := remoting.NewRequest(protocol.RequestGetRouteInfoByTopic, h.Encode(), nil)
	req.Version = version
	return req
}

func TestRouteJSONFormsByVersion(t *testing.T) {
	c := startCluster(t, WithBrokers(2), WithTopic("T", 3))
	cl := newClient(t)
	tests := []struct {
		name     string
		version  int32
		standard bool
		quoted   bool
	}{
		{"Go client 317: fastjson", 317, false, false},
		{"4.9.3 (399): fastjson", 399, false, false},
		{"4.9.4 (401): standard", 401, false, true},
		{"4.9.8 (409): standard", 409, false, true},
		{"old but asks for standard", 317, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := cl.invoke(c.NameServerAddr(), routeRequest("T", tt.version, tt.standard))
			require.Equal(t, protocol.ResponseSuccess, resp.Code)
			require.Nil(t, resp.ExtFields, "4.9.8 sends no ext fields")
			body := string(resp.Body)
			require.Equal(t, tt.quoted, strings.Contains(body, `{"0":"`), body)
			require.Equal(t, !tt.quoted, strings.Contains(body, `{0:"`), body)
			var rd protocol.TopicRouteData
			require.NoError(t, rd.Decode(resp.Body))
			require.Len(t, rd.QueueDatas, 2)
			require.Equal(t, protocol.QueueData{BrokerName: "broker-a", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 6}, rd.QueueDatas[0])
			addr, ok := rd.MasterAddr("broker-b")
			require.True(t, ok)
			require.Equal(t, c.Broker("broker-b").Addr(), addr)
			require.Equal(t, "DefaultCluster", rd.BrokerDatas[0].Cluster)
		})
	}
}

func TestRouteTopicNotExist(t *testing.T) {
	c := startCluster(t)
	cl := newClient(t)
	resp := cl.invoke(c.NameServerAddr(), routeRequest("Nope", 317, false))
	want := golden(t, "a_produce", "0010")
	require.Equal(t, want.Code, resp.Code)
	require.Equal(t, strings.Replace(want.Remark, "GoldenAutoTopic", "Nope", 1), resp.Remark)
	require.Nil(t, resp.ExtFields)
}

func TestRouteGoldenShapes(t *testing.T) {
	c := startCluster(t, WithTopic("GoldenTopic", 4))
	cl := newClient(t)
	for _, n := range []struct{ req, resp string }{{"0001", "0004"}, {"0015", "0016"}} {
		greq, gresp := golden(t, "a_produce", n.req), golden(t, "a_produce", n.resp)
		req := remoting.NewRequest(greq.Code, greq.ExtFields, nil)
		req.Version = greq.Version
		resp := cl.invoke(c.NameServerAddr(), req)
		require.Equal(t, gresp.Code, resp.Code)
		require.Equal(t, keys(gresp), keys(resp))
		addr := c.Broker("broker-a").Addr()
		require.Equal(t, strings.ReplaceAll(string(gresp.Body), "127.0.0.1:10911", addr), string(resp.Body),
			"the route of %s for version %d", greq.ExtFields.Value("topic"), greq.Version)
	}
}

func TestRetryTopicRoutableAfterHeartbeat(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	cl := newClient(t)
	resp := cl.invoke(c.NameServerAddr(), routeRequest("%RETRY%G", 409, false))
	require.Equal(t, protocol.ResponseTopicNotExist, resp.Code)
	cl.heartbeat(c.Broker("broker-a").Addr(), "cid", "G", 1, "T", "*")
	resp = cl.invoke(c.NameServerAddr(), routeRequest("%RETRY%G", 409, false))
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	var rd protocol.TopicRouteData
	require.NoError(t, rd.Decode(resp.Body))
	require.Equal(t, []protocol.QueueData{{BrokerName: "broker-a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}, rd.QueueDatas)
}

func TestStoppedBrokerLeavesRoutesKilledStays(t *testing.T) {
	c := startCluster(t, WithBrokers(2), WithTopic("T", 1))
	cl := newClient(t)
	count := func() int {
		resp := cl.invoke(c.NameServerAddr(), routeRequest("T", 409, false))
		if resp.Code != protocol.ResponseSuccess {
			return 0
		}
		var rd protocol.TopicRouteData
		require.NoError(t, rd.Decode(resp.Body))
		return len(rd.QueueDatas)
	}
	require.Equal(t, 2, count())
	c.Broker("broker-a").Kill()
	require.Equal(t, 2, count())
	c.Broker("broker-b").Stop()
	require.Equal(t, 1, count())
	require.NoError(t, c.Broker("broker-b").Start())
	require.Equal(t, 2, count())
	c.Broker("broker-a").Stop()
	c.Broker("broker-b").Stop()
	require.Equal(t, 0, count())
}

func TestBrokerClusterInfo(t *testing.T) {
	c := startCluster(t, WithBrokers(2))
	cl := newClient(t)
	resp := cl.invoke(c.NameServerAddr(), remoting.NewRequest(protocol.RequestGetBrokerClusterInfo, nil, nil))
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	want := `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"` + c.Broker("broker-a").Addr() +
		`"},"brokerName":"broker-a","cluster":"DefaultCluster"},"broker-b":{"brokerAddrs":{0:"` +
		c.Broker("broker-b").Addr() + `"},"brokerName":"broker-b","cluster":"DefaultCluster"}},` +
		`"clusterAddrTable":{"DefaultCluster":["broker-a","broker-b"]}}`
	require.Equal(t, want, string(resp.Body))
}
