package fakebroker

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

const subFlag = protocol.PullSysFlagSubscription

func TestPullStatuses(t *testing.T) {
	c := startCluster(t, WithTopic("T", 3))
	b := c.Broker("broker-a")
	for i := range 7 {
		_, err := b.Produce("T", 0, &message.Message{Body: []byte(fmt.Sprint(i)),
			Properties: message.PropertiesOf(message.Property{Name: "TAGS", Value: "TagA"})})
		require.NoError(t, err)
	}
	_, err := b.Produce("T", 2, &message.Message{Body: []byte("x")}, &message.Message{Body: []byte("y")},
		&message.Message{Body: []byte("z")}, &message.Message{Body: []byte("w")})
	require.NoError(t, err)
	require.NoError(t, b.TruncateQueue("T", 2, 3))
	cl := newClient(t)
	tests := []struct {
		name            string
		queue           int32
		offset          int64
		sub             string
		code            int32
		remark          string
		next, min, max  int64
		wantBodies      []string
		maxMsgNums      int32
		suspendRequired bool
	}{
		{"found", 0, 0, "*", protocol.ResponseSuccess, "FOUND", 4, 0, 7, []string{"0", "1", "2", "3"}, 4, false},
		{"found from 5", 0, 5, "TagA", protocol.ResponseSuccess, "FOUND", 7, 0, 7, []string{"5", "6"}, 32, false},
		{"overflow badly", 0, 1000000, "*", protocol.ResponsePullOffsetMoved, "OFFSET_OVERFLOW_BADLY", 7, 0, 7, nil, 4, false},
		{"overflow one", 0, 7, "*", protocol.ResponsePullNotFound, "OFFSET_OVERFLOW_ONE", 7, 0, 7, nil, 4, false},
		{"empty queue at 5", 1, 5, "*", protocol.ResponsePullOffsetMoved, "NO_MESSAGE_IN_QUEUE", 0, 0, 0, nil, 4, false},
		{"empty queue at 0", 1, 0, "*", protocol.ResponsePullNotFound, "NO_MESSAGE_IN_QUEUE", 0, 0, 0, nil, 4, false},
		{"no matched", 0, 0, "TagZ", protocol.ResponsePullRetryImmediately, "NO_MATCHED_MESSAGE", 7, 0, 7, nil, 4, false},
		{"too small", 2, 1, "*", protocol.ResponsePullOffsetMoved, "OFFSET_TOO_SMALL", 3, 3, 4, nil, 4, false},
		{"after truncation", 2, 3, "*", protocol.ResponseSuccess, "FOUND", 4, 3, 4, []string{"w"}, 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := cl.invoke(b.Addr(), pullRequest("G", "T", tt.queue, tt.offset, tt.maxMsgNums, subFlag, 0, tt.sub))
			require.Equal(t, tt.code, resp.Code, resp.Remark)
			require.Equal(t, tt.remark, resp.Remark)
			require.Equal(t, []string{"suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset"}, keys(resp))
			h, msgs := pullResult(t, resp)
			require.Equal(t, protocol.PullMessageResponse{NextBeginOffset: tt.next, MinOffset: tt.min, MaxOffset: tt.max}, h)
			if tt.wantBodies == nil {
				require.Empty(t, msgs)
			} else {
				require.Equal(t, tt.wantBodies, bodies(msgs))
			}
		})
	}
}

// TestGoldenEdgePulls replays f_edge_pulls' pulls against the same messages.
func TestGoldenEdgePulls(t *testing.T) {
	c := startCluster(t, WithTopic("GoldenTopic", 4), WithTopic("GoldenEmptyTopic", 1))
	cl := newClient(t)
	produceGolden(t, c, cl)
	addr := c.Broker("broker-a").Addr()
	for _, p := range []struct{ req, resp string }{{"0031", "0032"}, {"0033", "0034"}, {"0035", "0036"}, {"0050", "0053"}, {"0022", "0023"}} {
		t.Run(p.req, func(t *testing.T) {
			want := golden(t, "f_edge_pulls", p.resp)
			got := cl.replay(addr, golden(t, "f_edge_pulls", p.req))
			require.Equal(t, want.Code, got.Code)
			require.Equal(t, want.Remark, got.Remark)
			require.ElementsMatch(t, want.ExtFields, got.ExtFields)
			wm, err := message.DecodeAll(want.Body)
			require.NoError(t, err)
			gm, err := message.DecodeAll(got.Body)
			require.NoError(t, err)
			require.Equal(t, bodies(wm), bodies(gm))
		})
	}
}

// TestGoldenHeldPulls replays captured long polls that ended at their suspend time (the
// suspend shortened), and mqadmin's binary pull, against the same messages.
func TestGoldenHeldPulls(t *testing.T) {
	c := startCluster(t, WithTopic("GoldenTopic", 4), WithTopic("GoldenEmptyTopic", 1))
	cl := newClient(t)
	produceGolden(t, c, cl)
	addr := c.Broker("broker-a").Addr()
	cl.replay(addr, golden(t, "b_consume_retry", "0007")) // GoldenGroup's heartbeat
	for _, p := range []struct{ scenario, req, resp string }{
		{"f_edge_pulls", "0025", "0135"},
		{"f_edge_pulls", "0058", "0149"},
		{"b_consume_retry", "0031", "0056"},
		{"e2_mqadmin_rocketmq", "0029", "0030"},
	} {
		t.Run(p.scenario+"/"+p.req, func(t *testing.T) {
			greq := golden(t, p.scenario, p.req)
			greq.ExtFields.Set("suspendTimeoutMillis", "20")
			req := &remoting.Command{Code: greq.Code, Version: greq.Version, ExtFields: greq.ExtFields,
				Serialize: greq.Serialize}
			rc := dialRaw(t, addr)
			rc.write(req)
			got := rc.read()
			want := golden(t, p.scenario, p.resp)
			require.Equal(t, want.Serialize, got.Serialize)
			require.Equal(t, want.Code, got.Code)
			require.Equal(t, want.Remark, got.Remark)
			require.ElementsMatch(t, want.ExtFields, got.ExtFields)
		})
	}
}

func TestPullBatchLimits(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2))
	b := c.Broker("broker-a")
	for range 40 {
		_, err := b.Produce("T", 0, &message.Message{Body: []byte("m")})
		require.NoError(t, err)
	}
	big := make([]byte, 100<<10)
	for range 5 {
		_, err := b.Produce("T", 1, &message.Message{Body: big})
		require.NoError(t, err)
	}
	cl := newClient(t)
	tests := []struct {
		name  string
		queue int32
		max   int32
		want  int
	}{
		{"more than 32 asked", 0, 100, 32},
		{"32 asked", 0, 32, 32},
		{"5 asked", 0, 5, 5},
		{"0 asked gets one", 0, 0, 1},
		{"negative asked gets one", 0, -3, 1},
		{"256 KiB limit", 1, 32, 2},
		{"first one always", 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := cl.invoke(b.Addr(), pullRequest("G", "T", tt.queue, 0, tt.max, subFlag, 0, "*"))
			require.Equal(t, protocol.ResponseSuccess, resp.Code)
			h, msgs := pullResult(t, resp)
			require.Len(t, msgs, tt.want)
			require.Equal(t, int64(tt.want), h.NextBeginOffset)
		})
	}
}

func TestPullFiltersByHeartbeatTags(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	for i, tag := range []string{"TagA", "TagC", "", "TagB", "TagC", "TagC"} {
		m := &message.Message{Body: []byte(fmt.Sprint(i))}
		if tag != "" {
			m.Properties.Set("TAGS", tag)
		}
		_, err := b.Produce("T", 0, m)
		require.NoError(t, err)
	}
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 10, "T", "TagA || TagB")
	resp := cl.invoke(b.Addr(), pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, 0, ""))
	h, msgs := pullResult(t, resp)
	require.Equal(t, []string{"0", "3"}, bodies(msgs))
	require.Equal(t, int64(6), h.NextBeginOffset, "unmatched messages are passed over")
	// The unmatched tail alone: nothing matches, the offset still moves.
	resp = cl.invoke(b.Addr(), pullRequest("G", "T", 0, 4, 32, 0, 0, ""))
	require.Equal(t, protocol.ResponsePullRetryImmediately, resp.Code)
	h, _ = pullResult(t, resp)
	require.Equal(t, int64(6), h.NextBeginOffset)
}

func TestPullSubscriptionErrors(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2), WithTopic("U", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 100, "T", "*")
	faq := "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
	tests := []struct {
		name   string
		req    *remoting.Command
		code   int32
		remark string
	}{
		{"no group", pullRequest("Other", "T", 0, 0, 32, 0, 0, ""), protocol.ResponseSubscriptionNotExist, "the consumer's group info not exist" + faq},
		{"no topic in group", pullRequest("G", "U", 0, 0, 32, 0, 0, ""), protocol.ResponseSubscriptionNotExist, "the consumer's subscription not exist" + faq},
		{"newer subVersion", withField(pullRequest("G", "T", 0, 0, 32, 0, 0, ""), "subVersion", "101"), protocol.ResponseSubscriptionNotLatest, "the consumer's subscription not latest"},
		{"topic not exist", pullRequest("G", "Nope", 0, 0, 32, 0, 0, ""), protocol.ResponseTopicNotExist, "topic[Nope] not exist, apply first please! " + faq},
		{"queue beyond", pullRequest("G", "T", 2, 0, 32, 0, 0, ""), protocol.ResponseSystemError, "queueId[2] is illegal, topic:[T] topicConfig.readQueueNums:[2] consumer:[/"},
		{"bad expression", pullRequest("G", "T", 0, 0, 32, subFlag, 0, "||"), protocol.ResponseSubscriptionParseFailed, "parse the consumer's subscription failed"},
		{"sql92", withField(pullRequest("G", "T", 0, 0, 32, subFlag, 0, "a > 1"), "expressionType", "SQL92"), protocol.ResponseSystemError, "The broker does not support consumer to filter message by SQL92"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := cl.invoke(b.Addr(), tt.req)
			require.Equal(t, tt.code, resp.Code)
			require.True(t, strings.HasPrefix(resp.Remark, tt.remark), resp.Remark)
			require.NotNil(t, resp.ExtFields)
			require.Empty(t, resp.ExtFields, "PullMessageResponseHeader with every field null")
		})
	}
	// The shape of a real SUBSCRIPTION_NOT_LATEST.
	want := golden(t, "d_admin_running_consumer", "0210")
	resp := cl.invoke(b.Addr(), withField(pullRequest("G", "T", 0, 0, 32, 0, 0, ""), "subVersion", "101"))
	require.Equal(t, want.Code, resp.Code)
	require.Equal(t, want.Remark, resp.Remark)
	require.Equal(t, keys(want), keys(resp))
}

func withField(req *remoting.Command, k, v string) *remoting.Command {
	req.ExtFields.Set(k, v)
	return req
}

func TestPullCommitsOffset(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "*")
	req := pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagCommitOffset, 0, "")
	req.ExtFields.Set("commitOffset", "42")
	cl.invoke(b.Addr(), req)
	off, ok := b.CommittedOffset("G", "T", 0)
	require.True(t, ok)
	require.Equal(t, int64(42), off)
	// Without the flag the field is ignored.
	req = pullRequest("G", "T", 0, 0, 32, 0, 0, "")
	req.ExtFields.Set("commitOffset", "7")
	cl.invoke(b.Addr(), req)
	off, _ = b.CommittedOffset("G", "T", 0)
	require.Equal(t, int64(42), off)
	// A held pull commits too.
	req = pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagCommitOffset|protocol.PullSysFlagSuspend, time.Minute, "")
	req.ExtFields.Set("commitOffset", "9")
	ch := cl.async(b.Addr(), req)
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	off, _ = b.CommittedOffset("G", "T", 0)
	require.Equal(t, int64(9), off)
	_, err := b.Produce("T", 0, &message.Message{Body: []byte("x")})
	require.NoError(t, err)
	require.Equal(t, protocol.ResponseSuccess, await(t, ch).Code)
}

func TestLongPollReleasedByArrival(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2))
	b := c.Broker("broker-a")
	cl := newClient(t, remoting.SerializeRocketMQ)
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "*")
	ch := cl.async(b.Addr(), pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, time.Minute, ""))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	notAnswered(t, ch)
	// A message for the other queue does not wake it.
	cl.send(b.Addr(), "T", 1, "other")
	notAnswered(t, ch)
	cl.send(b.Addr(), "T", 0, "mine")
	resp := await(t, ch)
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	require.Equal(t, remoting.SerializeJSON, resp.Serialize, "a held pull is answered in JSON")
	h, msgs := pullResult(t, resp)
	require.Equal(t, []string{"mine"}, bodies(msgs))
	require.Equal(t, int64(1), h.NextBeginOffset)
	require.Zero(t, b.HeldPulls())
	// An immediate answer follows the request's serialization.
	resp = cl.invoke(b.Addr(), pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, time.Minute, ""))
	require.Equal(t, remoting.SerializeRocketMQ, resp.Serialize)
}

func TestLongPollReleasedByTimeout(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "*")
	_, err := b.Produce("T", 0, &message.Message{Body: []byte("old")})
	require.NoError(t, err)
	ch := cl.async(b.Addr(), pullRequest("G", "T", 0, 1, 32, protocol.PullSysFlagSuspend, 100*time.Millisecond, ""))
	resp := await(t, ch)
	require.Equal(t, protocol.ResponsePullNotFound, resp.Code)
	require.Equal(t, "OFFSET_OVERFLOW_ONE", resp.Remark)
	h, _ := pullResult(t, resp)
	require.Equal(t, protocol.PullMessageResponse{NextBeginOffset: 1, MaxOffset: 1}, h)
	require.Zero(t, b.HeldPulls())
	// Without the suspend flag nothing is held.
	resp = cl.invoke(b.Addr(), pullRequest("G", "T", 0, 1, 32, 0, time.Minute, ""))
	require.Equal(t, protocol.ResponsePullNotFound, resp.Code)
}

func TestLongPollUnmatchedArrivalWaitsForHoldCheck(t *testing.T) {
	t.Parallel()
	c := startCluster(t, WithTopic("T", 1), WithHoldCheckInterval(time.Hour))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "TagA")
	const suspend = time.Second
	start := time.Now()
	ch := cl.async(b.Addr(), pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, suspend, ""))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	cl.send(b.Addr(), "T", 0, "b", "TAGS", "TagB")
	// At the suspend time the pull runs again and finds only the unmatched message; the
	// arrival did not answer it earlier. (Measured from before the pull was sent, not
	// with notAnswered: a loaded machine may reach it near the suspend time.)
	resp := await(t, ch)
	require.GreaterOrEqual(t, time.Since(start), suspend, "answered before the suspend time")
	require.Equal(t, protocol.ResponsePullRetryImmediately, resp.Code)
	h, _ := pullResult(t, resp)
	require.Equal(t, int64(1), h.NextBeginOffset)
}

func TestLongPollHoldCheck(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1), WithHoldCheckInterval(20*time.Millisecond))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "TagA")
	ch := cl.async(b.Addr(), pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, time.Hour, ""))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	cl.send(b.Addr(), "T", 0, "b", "TAGS", "TagB")
	resp := await(t, ch)
	require.Equal(t, protocol.ResponsePullRetryImmediately, resp.Code)
}

func TestLongPollDroppedWithConnection(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "*")
	ch := cl.async(b.Addr(), pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, time.Hour, ""))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	cl.cl.CloseConn(b.Addr())
	r := <-ch
	require.Error(t, r.err)
	require.Eventually(t, func() bool { return b.HeldPulls() == 0 }, callTimeout, time.Millisecond)
}

// rawConn speaks frames on a plain TCP connection, to replay captured binary requests.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	fr *remoting.FrameReader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	return &rawConn{t: t, nc: nc, fr: remoting.NewFrameReader(nc, 0)}
}

func (r *rawConn) write(cmd *remoting.Command) {
	frame, err := remoting.EncodeFrame(nil, cmd)
	require.NoError(r.t, err)
	_, err = r.nc.Write(frame)
	require.NoError(r.t, err)
}

func (r *rawConn) read() *remoting.Command {
	require.NoError(r.t, r.nc.SetReadDeadline(time.Now().Add(callTimeout)))
	cmd, err := r.fr.Read()
	require.NoError(r.t, err)
	return cmd
}

// TestGoldenBinaryLongPoll replays g_java_binary_longpoll: a Java client with ROCKETMQ
// headers; held pulls are answered in JSON, the immediate one in ROCKETMQ.
func TestGoldenBinaryLongPoll(t *testing.T) {
	t.Parallel()
	c := startCluster(t, WithTopic("GoldenLongPollTopic", 1))
	rc := dialRaw(t, c.Broker("broker-a").Addr())
	short := func(n, suspend string) *remoting.Command {
		cmd := golden(t, "g_java_binary_longpoll", n)
		require.Equal(t, remoting.SerializeRocketMQ, cmd.Serialize)
		cmd.ExtFields.Set("suspendTimeoutMillis", suspend)
		return cmd
	}
	check := func(got *remoting.Command, n string) {
		want := golden(t, "g_java_binary_longpoll", n)
		require.Equal(t, want.Serialize, got.Serialize, "frame %s", n)
		require.Equal(t, want.Code, got.Code)
		require.Equal(t, want.Remark, got.Remark)
		require.ElementsMatch(t, want.ExtFields, got.ExtFields)
	}
	// Held on the empty queue, answered at its suspend time.
	rc.write(short("0017", "200"))
	check(rc.read(), "0025")
	// Held again, woken by a SEND_MESSAGE_V2 (whose answer keeps ROCKETMQ).
	rc.write(short("0026", "60000"))
	require.Eventually(t, func() bool { return c.Broker("broker-a").HeldPulls() == 1 }, callTimeout, time.Millisecond)
	send := golden(t, "g_java_binary_longpoll", "0027")
	rc.write(send)
	first, second := rc.read(), rc.read()
	if first.Opaque != send.Opaque {
		first, second = second, first
	}
	want := golden(t, "g_java_binary_longpoll", "0028")
	require.Equal(t, want.Serialize, first.Serialize)
	require.ElementsMatch(t, keys(want), keys(first))
	check(second, "0029")
	// An immediate pull: ROCKETMQ.
	rc.write(golden(t, "g_java_binary_longpoll", "0030"))
	got := rc.read()
	check(got, "0031")
	wm, err := message.DecodeAll(golden(t, "g_java_binary_longpoll", "0031").Body)
	require.NoError(t, err)
	gm, err := message.DecodeAll(got.Body)
	require.NoError(t, err)
	require.Equal(t, wm[0].Properties.String(), gm[0].Properties.String())
	require.Equal(t, wm[0].StoreSize, gm[0].StoreSize)
}
