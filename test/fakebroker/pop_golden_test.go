package fakebroker

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// popCluster is golden p_pop_533's broker: broker-5a with GoldenPopTopic (4 queues),
// answering as 5.3.3.
func popCluster(t *testing.T, opts ...Opt) *Cluster {
	return startCluster(t, append([]Opt{WithRocketMQ5(true), WithBrokerNames("broker-5a"), WithTopic("GoldenPopTopic", 4)}, opts...)...)
}

// popRequest builds a POP_MESSAGE as the Java client does, born now.
func popRequest(group, topic string, queue int32, invisible, poll time.Duration) *remoting.Command {
	h := protocol.PopMessageRequest{PollTime: poll.Milliseconds(), InvisibleTime: invisible.Milliseconds(), QueueID: queue,
		BornTime: time.Now().UnixMilli(), MaxMsgNums: 32, BrokerName: "broker-5a", Topic: topic, ExpType: "TAG", Exp: "*",
		ConsumerGroup: group, InitMode: protocol.InitModeMin}
	return remoting.NewRequest(protocol.RequestPopMessage, h.Encode(), nil)
}

// popped is one message of a POP answer with its handle.
type popped struct {
	msg    *message.Ext
	handle protocol.ExtraInfo
}

// popAnswer reads a FOUND answer and gives each message its handle as the Java client
// builds it (the broker's own for a revived one).
func popAnswer(t *testing.T, resp *remoting.Command) (protocol.PopMessageResponse, []popped) {
	t.Helper()
	require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	require.Equal(t, "FOUND", resp.Remark)
	var h protocol.PopMessageResponse
	require.NoError(t, h.Decode(resp.ExtFields))
	offs, err := protocol.ParsePopOffsets(h.StartOffsetInfo, h.MsgOffsetInfo)
	require.NoError(t, err)
	msgs, err := message.DecodeAll(resp.Body)
	require.NoError(t, err)
	used := map[int]int{}
	var out []popped
	for _, m := range msgs {
		if ck, ok := m.Properties.Get(protocol.PropertyPopCK); ok {
			e, err := protocol.ParseExtraInfo(ck)
			require.NoError(t, err)
			out = append(out, popped{m, e})
			continue
		}
		mark := protocol.TopicMark(m.Topic)
		k := offs.Index(mark, m.QueueID)
		require.GreaterOrEqual(t, k, 0)
		off := offs[k].Offsets[used[k]]
		used[k]++
		require.Equal(t, m.QueueOffset, off)
		out = append(out, popped{m, protocol.ExtraInfo{CkQueueOffset: offs[k].StartOffset, PopTime: h.PopTime,
			InvisibleTime: h.InvisibleTime, ReviveQID: h.ReviveQID, TopicMark: mark, BrokerName: "broker-5a",
			QueueID: m.QueueID, QueueOffset: off}})
	}
	return h, out
}

// ackRequest acks a popped message as the Java client does.
func ackRequest(group, topic string, p popped) *remoting.Command {
	h := protocol.AckMessageRequest{QueueID: p.handle.QueueID, Offset: p.handle.QueueOffset, BrokerName: "broker-5a",
		Topic: p.handle.RealTopic(topic, group), ConsumerGroup: group, ExtraInfo: p.handle.String()}
	return remoting.NewRequest(protocol.RequestAckMessage, h.Encode(), nil)
}

// The scenario of golden p_pop_533 replayed against the fake: the same answers, field
// for field, where the real broker's values are not times.
func TestGoldenPopScenario(t *testing.T) {
	c := popCluster(t)
	cl := newClient(t)
	addr := c.Broker("broker-5a").Addr()

	// mqadmin setConsumeMode, then the producer's 20 sends.
	resp := cl.replay(addr, golden(t, "p_pop_533", "0007"))
	require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	for n := 11; n <= 51; n += 2 {
		resp := cl.replay(addr, golden(t, "p_pop_533", fmt.Sprintf("%04d", n)))
		require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	}

	// The consumer's heartbeat, answered with the 5.x flags, and its assignments.
	resp = cl.replay(addr, golden(t, "p_pop_533", "0065"))
	require.Equal(t, golden(t, "p_pop_533", "0067").ExtFields, resp.ExtFields)
	for _, n := range []string{"0070", "0076"} {
		want := golden(t, "p_pop_533", fmt.Sprintf("%04d", mustAtoi(t, n)+1))
		resp := cl.replay(addr, golden(t, "p_pop_533", n))
		require.Equal(t, protocol.ResponseSuccess, resp.Code)
		require.Equal(t, string(want.Body), string(resp.Body))
	}

	// The first pop gets all 20 messages, every queue from offset 0.
	g := golden(t, "p_pop_533", "0079")
	var gh protocol.PopMessageRequest
	require.NoError(t, gh.Decode(g.ExtFields))
	gh.BornTime = time.Now().UnixMilli()
	resp = cl.invoke(addr, remoting.NewRequest(protocol.RequestPopMessage, gh.Encode(), nil))
	want := golden(t, "p_pop_533", "0080")
	require.Equal(t, keys(want), keys(resp), "the answer's fields in the broker's order")
	h, msgs := popAnswer(t, resp)
	var wh protocol.PopMessageResponse
	require.NoError(t, wh.Decode(want.ExtFields))
	sameOffsets(t, wh, h)
	require.Len(t, msgs, 20)
	wantMsgs, err := message.DecodeAll(want.Body)
	require.NoError(t, err)
	byIndex := map[string]*message.Ext{}
	for _, m := range wantMsgs {
		byIndex[m.Property("goldenIndex")] = m
	}
	for _, p := range msgs {
		w := byIndex[p.msg.Property("goldenIndex")]
		require.NotNil(t, w)
		require.Equal(t, w.QueueID, p.msg.QueueID)
		require.Equal(t, w.QueueOffset, p.msg.QueueOffset)
		require.Equal(t, w.MsgID(), p.msg.MsgID())
		_, hasCK := p.msg.Properties.Get(protocol.PropertyPopCK)
		require.False(t, hasCK, "records unchanged: no POP_CK")
	}

	// 19 acks; goldenIndex 5 gets RECONSUME_LATER: its invisible time changes (10 s in
	// the capture, 50 ms here).
	var five popped
	for _, p := range msgs {
		if p.msg.Property("goldenIndex") == "5" {
			five = p
			continue
		}
		resp := cl.invoke(addr, ackRequest("GoldenPopGroup", "GoldenPopTopic", p))
		require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
		require.Empty(t, resp.Remark)
		require.Empty(t, resp.ExtFields)
	}
	cit := protocol.ChangeInvisibleTimeRequest{InvisibleTime: 50, QueueID: five.handle.QueueID, Offset: five.handle.QueueOffset,
		BrokerName: "broker-5a", Topic: "GoldenPopTopic", ConsumerGroup: "GoldenPopGroup", ExtraInfo: five.handle.String()}
	resp = cl.invoke(addr, remoting.NewRequest(protocol.RequestChangeMessageInvisibleTime, cit.Encode(), nil))
	want = golden(t, "p_pop_533", "0121")
	require.Equal(t, want.Code, resp.Code)
	require.Equal(t, want.Remark, resp.Remark)
	require.Equal(t, keys(want), keys(resp))
	var ch protocol.ChangeInvisibleTimeResponse
	require.NoError(t, ch.Decode(resp.ExtFields))

	// Revived into %RETRY%GoldenPopGroup_GoldenPopTopic with reconsume times 1, popped
	// from there re-encoded as the capture's 0122 shows it.
	require.Eventually(t, func() bool {
		return len(c.Broker("broker-5a").PopRetryMessages("GoldenPopGroup", "GoldenPopTopic")) == 1
	}, 5*time.Second, 5*time.Millisecond)
	retried := c.Broker("broker-5a").PopRetryMessages("GoldenPopGroup", "GoldenPopTopic")[0]
	require.Equal(t, int32(1), retried.ReconsumeTimes)
	require.Equal(t, strconv.FormatInt(ch.PopTime, 10), retried.Property(protocol.PropertyFirstPopTime))

	gh.BornTime = time.Now().UnixMilli()
	resp = cl.invoke(addr, remoting.NewRequest(protocol.RequestPopMessage, gh.Encode(), nil))
	want = golden(t, "p_pop_533", "0122")
	h, msgs = popAnswer(t, resp)
	require.NoError(t, wh.Decode(want.ExtFields))
	require.Equal(t, wh.StartOffsetInfo, h.StartOffsetInfo)
	require.Equal(t, wh.MsgOffsetInfo, h.MsgOffsetInfo)
	require.Len(t, msgs, 1)
	wantRetried, err := message.DecodeAll(want.Body)
	require.NoError(t, err)
	got := msgs[0].msg
	require.Equal(t, "GoldenPopTopic", got.Topic, "the topic popped for")
	require.Equal(t, int32(0), got.QueueID)
	require.Equal(t, int64(0), got.QueueOffset)
	require.Equal(t, int32(1), got.ReconsumeTimes)
	require.Equal(t, wantRetried[0].MsgID(), got.MsgID())
	require.Subset(t, propertyNames(got), []string{protocol.PropertyFirstPopTime, protocol.PropertyPopCK})
	// The broker writes a re-encoded record's properties from a HashMap: the fake's
	// emulation of its order gives the capture's bytes for the capture's keys.
	raw := wantRetried[0].Properties.String()
	require.Equal(t, raw, parseJProps5(raw).String())
	require.Equal(t, h.PopTime, msgs[0].handle.PopTime)
	require.Equal(t, protocol.TopicMarkRetry, msgs[0].handle.TopicMark)
	resp = cl.invoke(addr, ackRequest("GoldenPopGroup", "GoldenPopTopic", msgs[0]))
	require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)

	// Nothing left: a held pop ends in POLLING_TIMEOUT after its poll time.
	start := time.Now()
	resp = cl.invoke(addr, popRequest("GoldenPopGroup", "GoldenPopTopic", -1, time.Minute, 150*time.Millisecond))
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
	want = golden(t, "p_pop_533", "0156")
	require.Equal(t, want.Code, resp.Code)
	require.Equal(t, want.Remark, resp.Remark)
	require.Equal(t, keys(want), keys(resp))
	require.Equal(t, "", resp.ExtFields.Value("startOffsetInfo"))

	// mqadmin consumerProgress after the run: every queue at 5/5, the retry topic at 1.
	b := c.Broker("broker-5a")
	for q := range 4 {
		off, ok := b.CommittedOffset("GoldenPopGroup", "GoldenPopTopic", q)
		require.True(t, ok)
		require.Equal(t, int64(5), off, "queue %d", q)
	}
	off, _ := b.CommittedOffset("GoldenPopGroup", "%RETRY%GoldenPopGroup_GoldenPopTopic", 0)
	require.Equal(t, int64(1), off)
	require.Empty(t, b.InflightPops("GoldenPopGroup"))
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// sameOffsets compares two answers' offset infos as sets of queues: the queue a pop of
// every queue starts at is random.
func sameOffsets(t *testing.T, want, got protocol.PopMessageResponse) {
	t.Helper()
	w, err := protocol.ParsePopOffsets(want.StartOffsetInfo, want.MsgOffsetInfo)
	require.NoError(t, err)
	g, err := protocol.ParsePopOffsets(got.StartOffsetInfo, got.MsgOffsetInfo)
	require.NoError(t, err)
	require.ElementsMatch(t, w, g)
}

func propertyNames(m *message.Ext) []string {
	var out []string
	m.Properties.Range(func(name, _ string) bool {
		out = append(out, name)
		return true
	})
	return out
}

// The SET_MESSAGE_REQUEST_MODE refusals and the assignments of several members.
func TestQueryAssignmentModes(t *testing.T) {
	c := popCluster(t, WithBrokers(2), WithBrokerNames("broker-5a", "broker-5b"), WithTopic("T", 4))
	b := c.Broker("broker-5a")
	require.ErrorContains(t, b.SetConsumeMode("G", "%RETRY%G", protocol.RequestModePop, 0), "retry topic is not allowed to set mode")
	require.ErrorContains(t, b.SetConsumeMode("G", "Nope", protocol.RequestModePop, 0), "not exist")
	require.ErrorContains(t, c.SetConsumeMode("G", "Nope", "POP", 0), "not exist")

	all := func() []message.Queue {
		var qs []message.Queue
		for _, bn := range []string{"broker-5a", "broker-5b"} {
			for q := range 4 {
				qs = append(qs, message.Queue{Topic: "T", BrokerName: bn, QueueID: int32(q)})
			}
		}
		return qs
	}()
	req := protocol.QueryAssignmentRequest{Topic: "T", ConsumerGroup: "G", StrategyName: "AVG", MessageModel: protocol.Clustering}
	cids := []string{"c1", "c2", "c3"}
	for _, tc := range []struct {
		name  string
		mode  modeEntry
		cid   string
		cids  []string
		want  []message.Queue
		isNil bool
	}{
		{"pull averagely", modeEntry{mode: protocol.RequestModePull}, "c1", cids, all[0:3], false},
		{"pull averagely, last", modeEntry{mode: protocol.RequestModePull}, "c3", cids, all[6:8], false},
		{"pop, share all", modeEntry{mode: protocol.RequestModePop, share: 8}, "c2", cids,
			[]message.Queue{{Topic: "T", BrokerName: "broker-5a", QueueID: -1}, {Topic: "T", BrokerName: "broker-5b", QueueID: -1}}, false},
		{"pop, share one", modeEntry{mode: protocol.RequestModePop, share: 1}, "c1", []string{"c1", "c2", "c3", "c4"},
			all[0:4], false},
		{"pop, more members than queues", modeEntry{mode: protocol.RequestModePop, share: 1}, "c9",
			[]string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}, all[0:1], false},
		{"not a member", modeEntry{mode: protocol.RequestModePull}, "x", cids, []message.Queue{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := req
			r.ClientID = tc.cid
			got, ok := assign(r, tc.mode, all, tc.cids)
			require.Equal(t, !tc.isNil, ok)
			require.Equal(t, tc.want, got)
		})
	}
	r := req
	r.StrategyName = "CONSISTENT_HASH"
	_, ok := assign(r, modeEntry{mode: protocol.RequestModePull}, all, cids)
	require.False(t, ok, "a strategy the broker does not know: no answer")
	_, ok = assign(req, modeEntry{mode: protocol.RequestModePull}, all, nil)
	require.False(t, ok, "no members")
	r = req
	r.MessageModel = protocol.Broadcasting
	got, ok := assign(r, modeEntry{mode: protocol.RequestModePull}, all, nil)
	require.True(t, ok)
	require.Equal(t, all, got)
	require.True(t, slices.IsSortedFunc(all, message.Queue.Compare))
}
