package fakebroker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

func updateOffsetRequest(group, topic string, q int32, off int64) *remoting.Command {
	h := protocol.UpdateConsumerOffsetRequest{ConsumerGroup: group, Topic: topic, QueueID: q, CommitOffset: off}
	return remoting.NewRequest(protocol.RequestUpdateConsumerOffset, h.Encode(), nil)
}

func TestPullServiceTime(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1), WithPullServiceTime(30*time.Millisecond))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.send(b.Addr(), "T", 0, "m")
	h := protocol.PullMessageRequest{ConsumerGroup: "G", Topic: "T", QueueID: 0, MaxMsgNums: 32,
		SysFlag: protocol.PullSysFlagSubscription, Subscription: "*", ExpressionType: protocol.ExpressionTypeTag}
	start := time.Now()
	first := cl.async(b.Addr(), remoting.NewRequest(protocol.RequestPullMessage, h.Encode(), nil))
	// A request of another code on the same connection is not held up behind it.
	resp := cl.invoke(b.Addr(), updateOffsetRequest("G", "T", 0, 1))
	require.Equal(t, int32(protocol.ResponseSuccess), resp.Code)
	require.Less(t, time.Since(start), 30*time.Millisecond)
	resp = await(t, first)
	require.Equal(t, int32(protocol.ResponseSuccess), resp.Code)
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
}

func TestOutOfOrderOffsetsAreCounted(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	// The second write arrives after the first but, processed first, is overwritten by it.
	require.NoError(t, b.SetLag(Lag{Code: RequestUpdateConsumerOffset, Min: 40 * time.Millisecond, Max: 40 * time.Millisecond}))
	older := cl.async(b.Addr(), updateOffsetRequest("G", "T", 0, 5))
	time.Sleep(5 * time.Millisecond)
	require.NoError(t, b.SetLag())
	cl.invoke(b.Addr(), updateOffsetRequest("G", "T", 0, 9))
	await(t, older)
	off, ok := b.CommittedOffset("G", "T", 0)
	require.True(t, ok)
	require.Equal(t, int64(5), off, "the older write landed last")
	n, recent := b.OffsetRegressions("G")
	require.Equal(t, 1, n)
	require.Equal(t, []OffsetRegression{{Group: "G", Topic: "T", QueueID: 0, Request: 5, Stored: 9}}, recent)
	n, _ = b.OffsetRegressions("other")
	require.Zero(t, n)
	// An administrator's reset is not a regression.
	b.SetCommittedOffset("G", "T", 0, 1)
	n, _ = b.OffsetRegressions("")
	require.Equal(t, 1, n)

	require.Error(t, b.SetLag(Lag{Code: RequestPullMessage, Min: time.Second, Max: time.Millisecond}))
	_, err := NewCluster(WithLag(Lag{Code: -7}))
	require.ErrorContains(t, err, "not a request code")
}
