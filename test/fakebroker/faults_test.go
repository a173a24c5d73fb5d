package fakebroker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

func maxOffsetRequest(topic string) *remoting.Command {
	h := protocol.GetMaxOffsetRequest{Topic: topic}
	return remoting.NewRequest(protocol.RequestGetMaxOffset, h.Encode(), nil)
}

func TestFaultFailTimes(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	inj, err := b.Inject(Fault{Code: protocol.RequestGetMaxOffset, Fail: protocol.ResponseSystemBusy, Remark: "busy", Times: 3})
	require.NoError(t, err)
	for range 3 {
		resp := cl.invoke(b.Addr(), maxOffsetRequest("T"))
		require.Equal(t, protocol.ResponseSystemBusy, resp.Code)
		require.Equal(t, "busy", resp.Remark)
	}
	require.Equal(t, protocol.ResponseSuccess, cl.invoke(b.Addr(), maxOffsetRequest("T")).Code)
	require.Equal(t, 3, inj.Hits())
	require.Equal(t, 4, b.Requests(protocol.RequestGetMaxOffset))
	// Other codes are not touched.
	_, err = b.Inject(Fault{Code: protocol.RequestGetMinOffset, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	require.Equal(t, protocol.ResponseSuccess, cl.invoke(b.Addr(), maxOffsetRequest("T")).Code)
	b.ClearFaults()
}

func TestFaultDropThenRemove(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	inj, err := b.Inject(Fault{Code: AnyCode, Drop: true})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = cl.cl.Invoke(ctx, b.Addr(), maxOffsetRequest("T"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	inj.Remove()
	require.Equal(t, protocol.ResponseSuccess, cl.invoke(b.Addr(), maxOffsetRequest("T")).Code)
	require.Equal(t, 1, inj.Hits())
}

func TestFaultDelayDoesNotHoldUpLaterRequests(t *testing.T) {
	t.Parallel()
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	_, err := b.Inject(Fault{Code: protocol.RequestGetMaxOffset, Delay: time.Second, Times: 1})
	require.NoError(t, err)
	slow := cl.async(b.Addr(), maxOffsetRequest("T"))
	h := protocol.GetMinOffsetRequest{Topic: "T"}
	fast := cl.async(b.Addr(), remoting.NewRequest(protocol.RequestGetMinOffset, h.Encode(), nil))
	require.Equal(t, protocol.ResponseSuccess, await(t, fast).Code)
	// Not waited for (notAnswered's 50 ms would eat into the delay on a loaded machine):
	// the fast answer came first, the slow one is still due.
	select {
	case r := <-slow:
		t.Fatalf("the delayed request was answered before the one after it: %+v %v", r.resp, r.err)
	default:
	}
	require.Equal(t, protocol.ResponseSuccess, await(t, slow).Code)
}

func TestFaultFor(t *testing.T) {
	t.Parallel()
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	_, err := b.Inject(Fault{Code: protocol.RequestGetMaxOffset, Fail: protocol.ResponseSystemBusy, For: 500 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, protocol.ResponseSystemBusy, cl.invoke(b.Addr(), maxOffsetRequest("T")).Code)
	require.Eventually(t, func() bool {
		return cl.invoke(b.Addr(), maxOffsetRequest("T")).Code == protocol.ResponseSuccess
	}, callTimeout, 10*time.Millisecond)
}

func TestInvalidFaults(t *testing.T) {
	c := startCluster(t)
	for _, f := range []Fault{
		{Code: 11},
		{Code: 11, Drop: true, Fail: 2},
		{Code: 11, Drop: true, Delay: time.Second},
		{Code: 11, Fail: 2, Times: -1},
		{Code: -5, Fail: 2},
	} {
		_, err := c.Broker("broker-a").Inject(f)
		require.Error(t, err, "%+v", f)
	}
}

func TestPauseAndResume(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "c1", "G", 1, "T", "*")
	cl.nextInbound()
	b.Pause()
	ch := cl.async(b.Addr(), maxOffsetRequest("T"))
	// The broker counts the request when it reads it, which a loaded machine may take a
	// while to do: wait for that, then see that it is not answered.
	require.Eventually(t, func() bool { return b.Requests(protocol.RequestGetMaxOffset) == 1 }, callTimeout, time.Millisecond)
	notAnswered(t, ch)
	require.Equal(t, 1, b.Requests(protocol.RequestGetMaxOffset))
	// What the broker would send meanwhile waits too.
	b.NotifyConsumerIDsChanged("G")
	cl.noInbound()
	b.Resume()
	require.Equal(t, protocol.ResponseSuccess, await(t, ch).Code)
	require.Equal(t, protocol.RequestNotifyConsumerIDsChanged, cl.nextInbound().Code)
}

func TestRefuseAndCloseConnections(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	old := newClient(t)
	old.invoke(b.Addr(), maxOffsetRequest("T"))
	b.RefuseConnections(0)
	fresh := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := fresh.cl.Invoke(ctx, b.Addr(), maxOffsetRequest("T"))
	var ce *remoting.ConnError
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, protocol.ResponseSuccess, old.invoke(b.Addr(), maxOffsetRequest("T")).Code, "open connections stay")
	b.AcceptConnections()
	require.Equal(t, protocol.ResponseSuccess, fresh.invoke(b.Addr(), maxOffsetRequest("T")).Code)
	// Closing every connection: both clients see it, and can dial again. The refused
	// dial of fresh may have reported a closed connection already: forget it.
	for _, cl := range []*client{old, fresh} {
		drainClosed(cl)
	}
	b.CloseConnections()
	for _, cl := range []*client{old, fresh} {
		select {
		case <-cl.closed:
		case <-time.After(callTimeout):
			t.Fatal("connection not closed")
		}
		require.Equal(t, protocol.ResponseSuccess, cl.invoke(b.Addr(), maxOffsetRequest("T")).Code)
	}
	// A refusal for a while ends by itself.
	b.RefuseConnections(50 * time.Millisecond)
	b.CloseConnections()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		_, err := fresh.cl.Invoke(ctx, b.Addr(), maxOffsetRequest("T"))
		return err == nil
	}, callTimeout, 10*time.Millisecond)
}

func TestNameServerFaults(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	ns := c.NameServer()
	cl := newClient(t)
	_, err := ns.Inject(Fault{Code: protocol.RequestGetRouteInfoByTopic, Fail: protocol.ResponseSystemError, Times: 1})
	require.NoError(t, err)
	require.Equal(t, protocol.ResponseSystemError, cl.invoke(ns.Addr(), routeRequest("T", 409, false)).Code)
	require.Equal(t, protocol.ResponseSuccess, cl.invoke(ns.Addr(), routeRequest("T", 409, false)).Code)
	ns.Pause()
	ch := cl.async(ns.Addr(), routeRequest("T", 409, false))
	notAnswered(t, ch)
	ns.Resume()
	require.Equal(t, protocol.ResponseSuccess, await(t, ch).Code)
	require.Equal(t, 3, ns.Requests(protocol.RequestGetRouteInfoByTopic))
	require.Equal(t, map[int32]int{protocol.RequestGetRouteInfoByTopic: 3}, ns.RequestCounts())
}

// drainClosed forgets the connection closes cl has seen so far.
func drainClosed(cl *client) {
	for {
		select {
		case <-cl.closed:
		default:
			return
		}
	}
}
