package fakebroker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

func TestRestartKeepsData(t *testing.T) {
	t.Parallel()
	c := startCluster(t, WithTopic("T", 2), WithDelayLevels(300*time.Millisecond))
	b := c.Broker("broker-a")
	addr := b.Addr()
	cl := newClient(t)
	cl.heartbeat(addr, "c1", "G", 1, "T", "*")
	cl.nextInbound()
	cl.send(addr, "T", 0, "kept")
	cl.send(addr, "T", 1, "delayed", "DELAY", "1")
	b.SetCommittedOffset("G", "T", 0, 1)
	lock(cl, addr, "G", "c1", message.Queue{Topic: "T", BrokerName: "broker-a"})

	b.Stop()
	require.False(t, b.Running())
	select {
	case <-cl.closed:
	case <-time.After(callTimeout):
		t.Fatal("the client's connection stayed open")
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := cl.cl.Invoke(ctx, addr, maxOffsetRequest("T"))
	require.Error(t, err)

	require.NoError(t, b.Start())
	require.Equal(t, addr, b.Addr())
	require.Equal(t, []string{"kept"}, bodies(b.Messages("T", 0)))
	off, ok := b.CommittedOffset("G", "T", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), off)
	require.Empty(t, b.Clients("G"), "groups live in connections")
	require.Empty(t, b.Locks("G"), "locks live in memory")
	require.Eventually(t, func() bool { return len(b.Messages("T", 1)) == 1 }, callTimeout, time.Millisecond,
		"the delayed message is delivered after the restart")
	require.Equal(t, protocol.ResponseSuccess, cl.invoke(addr, maxOffsetRequest("T")).Code)
	require.Error(t, b.Start(), "already running")
}

func TestKillResetsConnections(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
	held := cl.async(b.Addr(), pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, time.Hour, ""))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	b.Kill()
	r := <-held
	require.Error(t, r.err)
	require.Zero(t, b.HeldPulls())
	require.NoError(t, b.Start())
	cl.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
	require.Equal(t, []string{"c1"}, b.Clients("G"))
}

func TestNameServerRestart(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	ns := c.NameServer()
	cl := newClient(t)
	ns.Stop()
	require.False(t, ns.Running())
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := cl.cl.Invoke(ctx, ns.Addr(), routeRequest("T", 409, false))
	require.Error(t, err)
	require.NoError(t, ns.Start())
	require.Equal(t, protocol.ResponseSuccess, cl.invoke(ns.Addr(), routeRequest("T", 409, false)).Code)
	ns.Kill()
	require.NoError(t, ns.Start())
}

func TestClusterProduceRoundRobin(t *testing.T) {
	c := startCluster(t, WithBrokers(2), WithTopic("T", 2))
	var msgs []*message.Message
	for range 8 {
		msgs = append(msgs, &message.Message{Body: []byte("m")})
	}
	got, err := c.Produce("T", msgs...)
	require.NoError(t, err)
	require.Len(t, got, 8)
	count := map[message.Queue]int{}
	for _, p := range got {
		count[p.Queue]++
		require.Len(t, p.MsgID, 32)
		require.Len(t, p.OffsetMsgID, 32)
	}
	require.Len(t, count, 4)
	for q, n := range count {
		require.Equal(t, 2, n, q.String())
	}
	require.Len(t, c.Messages("T"), 8)
	// A new topic is created on every broker.
	_, err = c.Produce("Fresh", &message.Message{Body: []byte("x")})
	require.NoError(t, err)
	for _, b := range c.Brokers() {
		ti, ok := b.Topic("Fresh")
		require.True(t, ok)
		require.Equal(t, 4, ti.WriteQueues)
	}
	// UNIQ_KEYs are distinct.
	seen := map[string]bool{}
	for _, p := range got {
		require.False(t, seen[p.MsgID])
		seen[p.MsgID] = true
	}
}

func TestProduceWakesLongPoll(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t, remoting.SerializeRocketMQ)
	cl.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
	held := cl.async(b.Addr(), pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, time.Hour, ""))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	p, err := b.Produce("T", 0, &message.Message{Body: []byte("x")})
	require.NoError(t, err)
	resp := await(t, held)
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	_, msgs := pullResult(t, resp)
	require.Equal(t, p[0].MsgID, msgs[0].MsgID())
	require.Equal(t, p[0].OffsetMsgID, msgs[0].OffsetMsgID())
}
