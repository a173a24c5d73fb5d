package fakebroker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

func lock(cl *client, addr, group, clientID string, mqs ...message.Queue) []message.Queue {
	body := protocol.LockBatchRequest{ConsumerGroup: group, ClientID: clientID, MQSet: mqs}
	resp := cl.invoke(addr, remoting.NewRequest(protocol.RequestLockBatchMQ, nil, body.Encode(protocol.StyleFastjson)))
	require.Equal(cl.t, protocol.ResponseSuccess, resp.Code)
	require.Nil(cl.t, resp.ExtFields)
	var out protocol.LockBatchResponse
	require.NoError(cl.t, out.Decode(resp.Body))
	return out.LockOKMQSet
}

func unlock(cl *client, addr, group, clientID string, mqs ...message.Queue) {
	body := protocol.UnlockBatchRequest{ConsumerGroup: group, ClientID: clientID, MQSet: mqs}
	resp := cl.invoke(addr, remoting.NewRequest(protocol.RequestUnlockBatchMQ, nil, body.Encode(protocol.StyleFastjson)))
	require.Equal(cl.t, protocol.ResponseSuccess, resp.Code)
}

func TestLocks(t *testing.T) {
	t.Parallel()
	c := startCluster(t, WithTopic("T", 4), WithLockExpiry(time.Second))
	b := c.Broker("broker-a")
	cl := newClient(t)
	q := func(id int32) message.Queue { return message.Queue{Topic: "T", BrokerName: "broker-a", QueueID: id} }
	require.Equal(t, []message.Queue{q(0), q(1)}, lock(cl, b.Addr(), "G", "c1", q(0), q(1)))
	require.Equal(t, []message.Queue{q(2)}, lock(cl, b.Addr(), "G", "c2", q(1), q(2)), "q1 is c1's")
	require.Equal(t, map[message.Queue]string{q(0): "c1", q(1): "c1", q(2): "c2"}, b.Locks("G"))
	require.Equal(t, []message.Queue{q(1)}, lock(cl, b.Addr(), "Other", "c2", q(1)), "locks are per group")
	// Unlock releases only one's own locks.
	unlock(cl, b.Addr(), "G", "c2", q(0), q(2))
	require.Equal(t, map[message.Queue]string{q(0): "c1", q(1): "c1"}, b.Locks("G"))
	// c1 stops renewing: once expired, c2 takes them.
	require.Eventually(t, func() bool { return len(b.Locks("G")) == 0 }, callTimeout, 5*time.Millisecond)
	require.Equal(t, []message.Queue{q(0)}, lock(cl, b.Addr(), "G", "c2", q(0)))
	// Renewing keeps a lock alive past the expiry. (An expiry of a second leaves a loaded
	// machine time for each round of renewal.)
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		require.Equal(t, []message.Queue{q(0)}, lock(cl, b.Addr(), "G", "c2", q(0)))
		require.Empty(t, lock(cl, b.Addr(), "G", "c1", q(0)))
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGoldenLockUnlock(t *testing.T) {
	c := startCluster(t, WithTopic("GoldenTopic", 4))
	b := c.Broker("broker-a")
	cl := newClient(t)
	for _, p := range []struct{ req, resp string }{{"0014", "0015"}, {"0086", "0087"}} {
		want := golden(t, "c_orderly", p.resp)
		got := cl.replay(b.Addr(), golden(t, "c_orderly", p.req))
		require.Equal(t, want.Code, got.Code)
		require.Equal(t, keys(want), keys(got))
		require.Equal(t, string(want.Body), string(got.Body))
	}
	require.Empty(t, b.Locks("GoldenOrderlyGroup"))
}

func TestBadLockBody(t *testing.T) {
	c := startCluster(t)
	cl := newClient(t)
	resp := cl.invoke(c.Broker("broker-a").Addr(), remoting.NewRequest(protocol.RequestLockBatchMQ, nil, []byte("[")))
	require.Equal(t, protocol.ResponseSystemError, resp.Code)
}
