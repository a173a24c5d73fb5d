package fakebroker

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

func TestUnknownCode(t *testing.T) {
	c := startCluster(t)
	cl := newClient(t)
	resp := cl.invoke(c.Broker("broker-a").Addr(), remoting.NewRequest(9999, nil, nil))
	require.Equal(t, protocol.ResponseRequestCodeNotSupported, resp.Code)
	resp = cl.invoke(c.NameServerAddr(), remoting.NewRequest(protocol.RequestPullMessage, nil, nil))
	require.Equal(t, protocol.ResponseRequestCodeNotSupported, resp.Code, "the name server does not pull")
}

// TestEmptyRequests sends every supported code with no ext fields and no body, in
// ROCKETMQ serialization: each gets an answer, and those that cannot do without a header
// or body get SYSTEM_ERROR in JSON, as 4.9.8's catch-all answers.
func TestEmptyRequests(t *testing.T) {
	c := startCluster(t)
	b := c.Broker("broker-a")
	cl := newClient(t, remoting.SerializeRocketMQ)
	codes := map[int32]bool{} // code → a header or body is required
	for code := range b.ep.handlers {
		codes[code] = true
	}
	for code := range c.ns.ep.handlers {
		codes[code] = code != protocol.RequestGetBrokerClusterInfo
	}
	for code, required := range codes {
		t.Run(protocol.RequestName(code), func(t *testing.T) {
			addr := b.Addr()
			if c.ns.ep.handlers[code] != nil {
				addr = c.NameServerAddr()
			}
			resp := cl.invoke(addr, remoting.NewRequest(code, nil, nil))
			if !required {
				require.Equal(t, protocol.ResponseSuccess, resp.Code)
				return
			}
			require.Equal(t, protocol.ResponseSystemError, resp.Code, resp.Remark)
			require.Equal(t, remoting.SerializeJSON, resp.Serialize)
			require.True(t, strings.HasPrefix(resp.Remark, "org.apache.rocketmq.remoting.exception.RemotingCommandException: the custom field <") ||
				strings.HasPrefix(resp.Remark, "com.alibaba.fastjson.JSONException: "), resp.Remark)
		})
	}
	require.Equal(t, 1, b.Requests(protocol.RequestPullMessage))
	require.Len(t, b.RequestCounts(), len(b.ep.handlers))
}

func TestOnewaySendIsStored(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	require.NoError(t, cl.cl.InvokeOneway(t.Context(), b.Addr(), sendRequest("T", 0, "oneway")))
	require.Eventually(t, func() bool { return len(b.Messages("T", 0)) == 1 }, callTimeout, time.Millisecond)
	// And a bad oneway request gets no answer: the next call's answer is its own.
	require.NoError(t, cl.cl.InvokeOneway(t.Context(), b.Addr(), remoting.NewRequest(protocol.RequestPullMessage, nil, nil)))
	require.Equal(t, protocol.ResponseSuccess, cl.invoke(b.Addr(), maxOffsetRequest("T")).Code)
}
