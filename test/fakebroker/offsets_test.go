package fakebroker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

func queryOffset(cl *client, addr, group, topic string, q int32) *remoting.Command {
	h := protocol.QueryConsumerOffsetRequest{ConsumerGroup: group, Topic: topic, QueueID: q}
	return cl.invoke(addr, remoting.NewRequest(protocol.RequestQueryConsumerOffset, h.Encode(), nil))
}

func TestQueryConsumerOffsetYoungQueueRule(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2))
	b := c.Broker("broker-a")
	cl := newClient(t)
	for range 3 {
		cl.send(b.Addr(), "T", 0, "m")
	}
	tests := []struct {
		name  string
		setup func()
		group string
		queue int32
		code  int32
		off   int64
	}{
		{"young queue, no offset: 0", nil, "G", 0, protocol.ResponseSuccess, 0},
		{"empty queue, no offset: 0", nil, "G", 1, protocol.ResponseSuccess, 0},
		{"committed", func() { b.SetCommittedOffset("G", "T", 0, 2) }, "G", 0, protocol.ResponseSuccess, 2},
		{"old queue, no offset: not found", func() { require.NoError(t, b.TruncateQueue("T", 0, 2)) }, "Other", 0, protocol.ResponseQueryNotFound, 0},
		{"old queue, committed", nil, "G", 0, protocol.ResponseSuccess, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			resp := queryOffset(cl, b.Addr(), tt.group, "T", tt.queue)
			require.Equal(t, tt.code, resp.Code)
			if tt.code == protocol.ResponseSuccess {
				var h protocol.QueryConsumerOffsetResponse
				require.NoError(t, h.Decode(resp.ExtFields))
				require.Equal(t, tt.off, h.Offset)
				require.Empty(t, resp.Remark)
			} else {
				require.Equal(t, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first", resp.Remark)
				require.NotNil(t, resp.ExtFields)
				require.Empty(t, resp.ExtFields)
			}
		})
	}
	// The real broker's answer for a brand-new group.
	want := golden(t, "b_consume_retry", "0015")
	resp := queryOffset(cl, b.Addr(), "Fresh", "T", 1)
	require.Equal(t, want.ExtFields, resp.ExtFields)
}

func TestUpdateConsumerOffset(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2))
	b := c.Broker("broker-a")
	cl := newClient(t)
	h := protocol.UpdateConsumerOffsetRequest{ConsumerGroup: "G", Topic: "T", QueueID: 1, CommitOffset: 7}
	resp := cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestUpdateConsumerOffset, h.Encode(), nil))
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	require.Equal(t, keys(golden(t, "b_consume_retry", "0044")), keys(resp))
	off, ok := b.CommittedOffset("G", "T", 1)
	require.True(t, ok)
	require.Equal(t, int64(7), off)
	// Oneway, and backwards: stored as given.
	h.CommitOffset = 3
	require.NoError(t, cl.cl.InvokeOneway(t.Context(), b.Addr(), remoting.NewRequest(protocol.RequestUpdateConsumerOffset, h.Encode(), nil)))
	require.Eventually(t, func() bool { off, _ := b.CommittedOffset("G", "T", 1); return off == 3 }, callTimeout, time.Millisecond)
	require.Equal(t, map[message.Queue]int64{{Topic: "T", BrokerName: "broker-a", QueueID: 1}: 3}, b.CommittedOffsets("G"))
}

func TestMinMaxOffsets(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	for range 5 {
		cl.send(b.Addr(), "T", 0, "m")
	}
	require.NoError(t, b.TruncateQueue("T", 0, 2))
	get := func(code int32, topic string) int64 {
		h := protocol.GetMaxOffsetRequest{Topic: topic, QueueID: 0}
		resp := cl.invoke(b.Addr(), remoting.NewRequest(code, h.Encode(), nil))
		require.Equal(t, protocol.ResponseSuccess, resp.Code)
		var r protocol.GetMaxOffsetResponse
		require.NoError(t, r.Decode(resp.ExtFields))
		return r.Offset
	}
	require.Equal(t, int64(5), get(protocol.RequestGetMaxOffset, "T"))
	require.Equal(t, int64(2), get(protocol.RequestGetMinOffset, "T"))
	require.Equal(t, int64(0), get(protocol.RequestGetMaxOffset, "Nope"))
	require.Equal(t, int64(0), get(protocol.RequestGetMinOffset, "Nope"))
}

func TestSearchOffsetByTimestamp(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2))
	b := c.Broker("broker-a")
	cl := newClient(t)
	var times []int64
	for i := range 4 {
		cl.send(b.Addr(), "T", 0, "m")
		times = append(times, b.Messages("T", 0)[i].StoreTimestamp)
		time.Sleep(3 * time.Millisecond) // distinct store times
	}
	search := func(q int32, ts int64) int64 {
		h := protocol.SearchOffsetRequest{Topic: "T", QueueID: q, Timestamp: ts}
		resp := cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestSearchOffsetByTimestamp, h.Encode(), nil))
		require.Equal(t, protocol.ResponseSuccess, resp.Code)
		var r protocol.SearchOffsetResponse
		require.NoError(t, r.Decode(resp.ExtFields))
		return r.Offset
	}
	require.Equal(t, int64(2), search(0, times[2]), "exact")
	require.Equal(t, int64(0), search(0, times[0]-1000), "before all: the first")
	require.Equal(t, int64(3), search(0, times[3]+1000), "after all: the last, not the max offset")
	require.Equal(t, int64(1), search(0, times[1]+1), "nearer neighbour")
	require.Equal(t, int64(0), search(1, times[0]), "empty queue")
}
