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
	const service = 300 * time.Millisecond // long enough that a loaded machine tells the two apart
	c := startCluster(t, WithTopic("T", 1), WithPullServiceTime(service))
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
	require.Less(t, time.Since(start), service)
	resp = await(t, first)
	require.Equal(t, int32(protocol.ResponseSuccess), resp.Code)
	require.GreaterOrEqual(t, time.Since(start), service)
}

func TestOutOfOrderOffsetsAreCounted(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	// The second write arrives after the first but, processed first, is overwritten by it.
	// The first one's lag is drawn when the broker counts it: wait for that, not for a
	// time, before the lag is lifted (a loaded machine may take long to read it).
	const held = 500 * time.Millisecond
	require.NoError(t, b.SetLag(Lag{Code: RequestUpdateConsumerOffset, Min: held, Max: held}))
	older := cl.async(b.Addr(), updateOffsetRequest("G", "T", 0, 5))
	require.Eventually(t, func() bool { return b.Requests(RequestUpdateConsumerOffset) == 1 }, 5*time.Second, time.Millisecond)
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
