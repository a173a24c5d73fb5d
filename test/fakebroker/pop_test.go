package fakebroker

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// produceN stores n messages on topic's queues in turn, bodies "0".."n-1".
func produceN(t *testing.T, c *Cluster, topic string, n int) {
	t.Helper()
	for i := range n {
		_, err := c.Produce(topic, &message.Message{Body: []byte(fmt.Sprint(i))})
		require.NoError(t, err)
	}
}

// popAll pops until n messages came, with a short poll.
func popAll(t *testing.T, cl *client, addr, group, topic string, invisible time.Duration, n int) []popped {
	t.Helper()
	var out []popped
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < n && time.Now().Before(deadline) {
		resp := cl.invoke(addr, popRequest(group, topic, -1, invisible, 20*time.Millisecond))
		if resp.Code == protocol.ResponsePollingTimeout {
			continue
		}
		_, msgs := popAnswer(t, resp)
		out = append(out, msgs...)
	}
	require.Len(t, out, n)
	return out
}

func TestPopNeedsRocketMQ5(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	cl := newClient(t)
	for _, code := range []int32{protocol.RequestPopMessage, protocol.RequestAckMessage, protocol.RequestQueryAssignment} {
		resp := cl.invoke(c.Brokers()[0].Addr(), remoting.NewRequest(code, nil, nil))
		require.Equal(t, protocol.ResponseRequestCodeNotSupported, resp.Code, "4.9.8 knows no code %d", code)
	}
}

// Messages popped and not acked come back from the POP retry topic after their
// invisible time, with one more reconsume time each time; acked ones do not; an ack
// after the revive changes nothing. Offsets follow the checkpoints.
func TestPopReviveAndAck(t *testing.T) {
	c := popCluster(t)
	cl := newClient(t)
	b := c.Broker("broker-5a")
	addr := b.Addr()
	produceN(t, c, "GoldenPopTopic", 8)
	// The pops and the acks must come within the invisible time: long enough for a loaded
	// machine (with 80 ms, an ack could come after the revive).
	const invisible = 500 * time.Millisecond
	first := popAll(t, cl, addr, "G", "GoldenPopTopic", invisible, 8)
	require.Len(t, b.InflightPops("G"), 4)
	var kept []popped
	for i, p := range first {
		if i%2 == 0 {
			require.Equal(t, protocol.ResponseSuccess, cl.invoke(addr, ackRequest("G", "GoldenPopTopic", p)).Code)
		} else {
			kept = append(kept, p)
		}
	}
	require.Eventually(t, func() bool {
		return len(b.PopRetryMessages("G", "GoldenPopTopic")) == 4
	}, 5*time.Second, 5*time.Millisecond)
	// Too late: revived already.
	require.Equal(t, protocol.ResponseSuccess, cl.invoke(addr, ackRequest("G", "GoldenPopTopic", kept[0])).Code)
	require.Len(t, b.PopRetryMessages("G", "GoldenPopTopic"), 4)
	for q := range 4 {
		off, _ := b.CommittedOffset("G", "GoldenPopTopic", q)
		require.Equal(t, int64(2), off, "queue %d: every checkpoint done", q)
	}

	again := popAll(t, cl, addr, "G", "GoldenPopTopic", invisible, 4)
	var bodies []string
	for _, p := range again {
		require.Equal(t, int32(1), p.msg.ReconsumeTimes)
		require.Equal(t, "GoldenPopTopic", p.msg.Topic)
		require.Equal(t, protocol.TopicMarkRetry, p.handle.TopicMark)
		require.NotEmpty(t, p.msg.Property(protocol.PropertyFirstPopTime))
		bodies = append(bodies, string(p.msg.Body))
	}
	for _, p := range kept {
		require.Contains(t, bodies, string(p.msg.Body))
	}
	// Not acked again: revived a second time, into the same retry topic.
	require.Eventually(t, func() bool {
		return len(b.PopRetryMessages("G", "GoldenPopTopic")) == 8
	}, 5*time.Second, 5*time.Millisecond)
	third := popAll(t, cl, addr, "G", "GoldenPopTopic", time.Minute, 4)
	for _, p := range third {
		require.Equal(t, int32(2), p.msg.ReconsumeTimes)
		require.Equal(t, protocol.ResponseSuccess, cl.invoke(addr, ackRequest("G", "GoldenPopTopic", p)).Code)
	}
	require.Empty(t, b.InflightPops("G"))
	off, _ := b.CommittedOffset("G", protocol.PopRetryTopic("GoldenPopTopic", "G"), 0)
	require.Equal(t, int64(8), off)
}

// Two consumers popping at once never get the same message; a changed invisible time
// holds the message back that long and answers its new handle.
func TestPopDisjointAndChangeInvisibleTime(t *testing.T) {
	c := popCluster(t)
	a, bcl := newClient(t), newClient(t)
	b := c.Broker("broker-5a")
	addr := b.Addr()
	produceN(t, c, "GoldenPopTopic", 64)
	chA := a.async(addr, popRequest("G", "GoldenPopTopic", -1, time.Minute, 0))
	chB := bcl.async(addr, popRequest("G", "GoldenPopTopic", -1, time.Minute, 0))
	seen := map[string]bool{}
	var all []popped
	for _, ch := range []<-chan asyncResult{chA, chB} {
		_, msgs := popAnswer(t, await(t, ch))
		for _, p := range msgs {
			require.False(t, seen[string(p.msg.Body)], "popped twice: %s", p.msg.Body)
			seen[string(p.msg.Body)] = true
		}
		all = append(all, msgs...)
	}
	require.Len(t, all, 64)

	// The new invisible time is long enough for the ack below to come within it on a
	// loaded machine (with 60 ms, and the new handle acked after the 63 others, it came
	// late under load and the message revived).
	const invisible = 300 * time.Millisecond
	p := all[0]
	changed := time.Now()
	h := protocol.ChangeInvisibleTimeRequest{InvisibleTime: invisible.Milliseconds(), QueueID: p.handle.QueueID, Offset: p.handle.QueueOffset,
		Topic: "GoldenPopTopic", ConsumerGroup: "G", ExtraInfo: p.handle.String()}
	resp := a.invoke(addr, remoting.NewRequest(protocol.RequestChangeMessageInvisibleTime, h.Encode(), nil))
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	require.Equal(t, remarkNotSet, resp.Remark)
	var ch protocol.ChangeInvisibleTimeResponse
	require.NoError(t, ch.Decode(resp.ExtFields))
	require.Equal(t, invisible.Milliseconds(), ch.InvisibleTime)
	// The old handle is acked; acking the new one within its time prevents the revive.
	fresh := p.handle
	fresh.CkQueueOffset, fresh.PopTime, fresh.InvisibleTime = p.handle.QueueOffset, ch.PopTime, ch.InvisibleTime
	require.Equal(t, protocol.ResponseSuccess, a.invoke(addr, ackRequest("G", "GoldenPopTopic", popped{p.msg, fresh})).Code)
	for _, q := range all[1:] {
		require.Equal(t, protocol.ResponseSuccess, a.invoke(addr, ackRequest("G", "GoldenPopTopic", q)).Code)
	}
	time.Sleep(time.Until(changed.Add(invisible + 150*time.Millisecond))) // past the new invisible time: nothing revives
	require.Empty(t, b.PopRetryMessages("G", "GoldenPopTopic"))
	require.Empty(t, b.InflightPops("G"))

	bad := h
	bad.Offset = 1 << 40
	resp = a.invoke(addr, remoting.NewRequest(protocol.RequestChangeMessageInvisibleTime, bad.Encode(), nil))
	require.Equal(t, protocol.ResponseNoMessage, resp.Code)
}

// A pop that finds nothing is held until a message arrives, or its poll time ends; a
// revived message does not wake it (golden p_pop_533), a new one does.
func TestPopLongPolling(t *testing.T) {
	c := popCluster(t)
	cl := newClient(t)
	b := c.Broker("broker-5a")
	addr := b.Addr()
	ch := cl.async(addr, popRequest("G", "GoldenPopTopic", -1, time.Minute, 5*time.Second))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	notAnswered(t, ch)
	produceN(t, c, "GoldenPopTopic", 1)
	_, msgs := popAnswer(t, await(t, ch))
	require.Len(t, msgs, 1)
	require.Zero(t, b.HeldPulls())

	// A pop of one queue is not woken by another queue's message.
	// (Checked by the time of the answer, not with notAnswered: a loaded machine may reach
	// it near the poll time. The broker holds until bornTime + pollTime in milliseconds,
	// so the answer may come a millisecond or two short of start + poll.)
	const poll = 300 * time.Millisecond
	start := time.Now()
	ch = cl.async(addr, popRequest("G", "GoldenPopTopic", 3, time.Minute, poll))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	_, err := b.Produce("GoldenPopTopic", 0, &message.Message{Body: []byte("q0")})
	require.NoError(t, err)
	resp := await(t, ch)
	require.GreaterOrEqual(t, time.Since(start), poll-10*time.Millisecond, "answered before its poll time")
	require.Equal(t, protocol.ResponsePollingTimeout, resp.Code)
	require.Equal(t, "NO_MESSAGE_IN_QUEUE", resp.Remark)

	// No poll time: answered at once. Too old: refused.
	resp = cl.invoke(addr, popRequest("G", "GoldenPopTopic", 3, time.Minute, 0))
	require.Equal(t, protocol.ResponsePollingTimeout, resp.Code)
	old := popRequest("G", "GoldenPopTopic", 3, time.Minute, 0)
	old.ExtFields.Set("bornTime", fmt.Sprint(time.Now().Add(-time.Second).UnixMilli()))
	resp = cl.invoke(addr, old)
	require.Equal(t, protocol.ResponsePollingTimeout, resp.Code)
	require.Contains(t, resp.Remark, "pop message is timeout too much")

	// A held pop goes with its connection.
	other := newClient(t)
	other.async(addr, popRequest("G", "GoldenPopTopic", 3, time.Minute, 10*time.Second))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, time.Second, time.Millisecond)
	_ = other.cl.Close()
	require.Eventually(t, func() bool { return b.HeldPulls() == 0 }, time.Second, time.Millisecond)
}

// The answers a pop refuses with, and where a new group starts.
func TestPopChecksAndInitMode(t *testing.T) {
	c := popCluster(t)
	cl := newClient(t)
	addr := c.Broker("broker-5a").Addr()
	produceN(t, c, "GoldenPopTopic", 8)
	for _, tc := range []struct {
		name   string
		edit   func(f *remoting.Fields)
		code   int32
		remark string
	}{
		{"too many", func(f *remoting.Fields) { f.Set("maxMsgNums", "33") }, protocol.ResponseInvalidParameter, "greater than 32"},
		{"no topic", func(f *remoting.Fields) { f.Set("topic", "Nope") }, protocol.ResponseTopicNotExist, "topic[Nope] not exist"},
		{"queue", func(f *remoting.Fields) { f.Set("queueId", "4") }, protocol.ResponseInvalidParameter, "queueId[4] is illegal"},
		{"bad sql92", func(f *remoting.Fields) { f.Set("expType", "SQL92"); f.Set("exp", "a >") }, protocol.ResponseSubscriptionParseFailed, "parse the consumer's subscription failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := popRequest("G", "GoldenPopTopic", -1, time.Minute, 0)
			tc.edit(&req.ExtFields)
			resp := cl.invoke(addr, req)
			require.Equal(t, tc.code, resp.Code)
			require.Contains(t, resp.Remark, tc.remark)
		})
	}
	bad := cl.invoke(addr, remoting.NewRequest(protocol.RequestPopMessage, remoting.Fields{{Key: "topic", Value: "x"}}, nil))
	require.Equal(t, protocol.ResponseSystemError, bad.Code)

	// Init mode MAX on a young queue starts at 0 (the first message is still stored).
	req := popRequest("New", "GoldenPopTopic", 0, time.Minute, 0)
	req.ExtFields.Set("initMode", "1")
	_, msgs := popAnswer(t, cl.invoke(addr, req))
	require.Len(t, msgs, 2)
	// On a queue whose first message is gone it starts at the last message.
	require.NoError(t, c.Broker("broker-5a").TruncateQueue("GoldenPopTopic", 1, 1))
	req = popRequest("Newer", "GoldenPopTopic", 1, time.Minute, 0)
	req.ExtFields.Set("initMode", "1")
	_, msgs = popAnswer(t, cl.invoke(addr, req))
	require.Len(t, msgs, 1)
	require.Equal(t, int64(1), msgs[0].msg.QueueOffset)

	// A tag subscription pops its tag only; the others are skipped and count as consumed.
	b := c.Broker("broker-5a")
	_, err := b.Produce("GoldenPopTopic", 2, &message.Message{Body: []byte("tagged"), Properties: message.PropertiesOf(message.Property{Name: "TAGS", Value: "A"})})
	require.NoError(t, err)
	req = popRequest("Tags", "GoldenPopTopic", 2, time.Minute, 0)
	req.ExtFields.Set("exp", "A")
	_, msgs = popAnswer(t, cl.invoke(addr, req))
	require.Len(t, msgs, 1)
	require.Equal(t, "tagged", string(msgs[0].msg.Body))
	tagged := msgs[0]
	resp := cl.invoke(addr, ackRequest("Tags", "GoldenPopTopic", tagged))
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	off, _ := b.CommittedOffset("Tags", "GoldenPopTopic", 2)
	require.Equal(t, int64(3), off)

	// SQL92, without WithPropertyFilter as well.
	_, err = b.Produce("GoldenPopTopic", 3, &message.Message{Body: []byte("big"), Properties: message.PropertiesOf(message.Property{Name: "a", Value: "7"})})
	require.NoError(t, err)
	req = popRequest("Sql", "GoldenPopTopic", 3, time.Minute, 0)
	req.ExtFields.Set("expType", "SQL92")
	req.ExtFields.Set("exp", "a > 5")
	_, msgs = popAnswer(t, cl.invoke(addr, req))
	require.Len(t, msgs, 1)
	require.Equal(t, "big", string(msgs[0].msg.Body))

	// Acks outside the queue are refused.
	p := tagged
	p.handle.QueueOffset = 99
	resp = cl.invoke(addr, ackRequest("Tags", "GoldenPopTopic", p))
	require.Equal(t, protocol.ResponseNoMessage, resp.Code)
	require.Contains(t, resp.Remark, "offset is illegal")
}

// BATCH_ACK_MESSAGE acks many messages of many pops in one request.
func TestPopBatchAck(t *testing.T) {
	c := popCluster(t)
	cl := newClient(t)
	b := c.Broker("broker-5a")
	addr := b.Addr()
	produceN(t, c, "GoldenPopTopic", 40)
	// Long enough that every pop and the ack come within it on a loaded machine.
	const invisible = 500 * time.Millisecond
	poppedAt := time.Now()
	msgs := popAll(t, cl, addr, "G", "GoldenPopTopic", invisible, 40)
	body := protocol.BatchAckRequest{BrokerName: "broker-5a"}
	index := map[[3]int64]int{}
	for _, p := range msgs {
		k := [3]int64{int64(p.handle.QueueID), p.handle.CkQueueOffset, p.handle.PopTime}
		i, ok := index[k]
		if !ok {
			i = len(body.Acks)
			index[k] = i
			body.Acks = append(body.Acks, protocol.BatchAck{ConsumerGroup: "G", Topic: "GoldenPopTopic", Retry: p.handle.TopicMark,
				StartOffset: p.handle.CkQueueOffset, QueueID: p.handle.QueueID, ReviveQueueID: p.handle.ReviveQID,
				PopTime: p.handle.PopTime, InvisibleTime: p.handle.InvisibleTime})
		}
		body.Acks[i].Set(int(p.handle.QueueOffset - p.handle.CkQueueOffset))
	}
	resp := cl.invoke(addr, remoting.NewRequest(protocol.RequestBatchAckMessage, nil, body.Encode(protocol.StyleStandard)))
	require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	require.Empty(t, b.InflightPops("G"))
	time.Sleep(time.Until(poppedAt.Add(invisible + 200*time.Millisecond))) // past the invisible time: nothing revives
	require.Empty(t, b.PopRetryMessages("G", "GoldenPopTopic"))
	empty := cl.invoke(addr, remoting.NewRequest(protocol.RequestBatchAckMessage, nil, []byte(`{"acks":[]}`)))
	require.Equal(t, protocol.ResponseNoMessage, empty.Code)
}

// Checkpoints survive a restart of the broker: what was not acked comes back.
func TestPopCheckpointsSurviveRestart(t *testing.T) {
	c := popCluster(t)
	cl := newClient(t)
	b := c.Broker("broker-5a")
	produceN(t, c, "GoldenPopTopic", 4)
	popAll(t, cl, b.Addr(), "G", "GoldenPopTopic", 300*time.Millisecond, 4)
	b.Stop()
	require.NoError(t, b.Start())
	require.Eventually(t, func() bool {
		return len(b.PopRetryMessages("G", "GoldenPopTopic")) == 4
	}, 5*time.Second, 5*time.Millisecond)
}

// Cluster.SetConsumeMode sets the mode on every broker with the topic, and
// QUERY_ASSIGNMENT answers it.
func TestSetConsumeModeAndQueryAssignment(t *testing.T) {
	c := popCluster(t, WithBrokers(2), WithBrokerNames("broker-5a", "broker-5b"))
	cl := newClient(t)
	for _, b := range c.Brokers() {
		cl.heartbeat(b.Addr(), "c1", "G", 1, "GoldenPopTopic", "*")
	}
	query := func(topic string) protocol.QueryAssignmentResponse {
		body := (&protocol.QueryAssignmentRequest{Topic: topic, ConsumerGroup: "G", ClientID: "c1", StrategyName: "AVG",
			MessageModel: protocol.Clustering}).Encode(protocol.StyleStandard)
		resp := cl.invoke(c.Brokers()[1].Addr(), remoting.NewRequest(protocol.RequestQueryAssignment, nil, body))
		require.Equal(t, protocol.ResponseSuccess, resp.Code)
		var out protocol.QueryAssignmentResponse
		require.NoError(t, out.Decode(resp.Body))
		return out
	}
	got := query("GoldenPopTopic")
	require.Len(t, got.Assignments, 8)
	require.Equal(t, protocol.RequestModePull, got.Assignments[0].Mode)

	require.NoError(t, c.SetConsumeMode("G", "GoldenPopTopic", "pop", 8))
	got = query("GoldenPopTopic")
	require.Equal(t, []protocol.QueueAssignment{
		{Queue: message.Queue{Topic: "GoldenPopTopic", BrokerName: "broker-5a", QueueID: -1}, Mode: protocol.RequestModePop},
		{Queue: message.Queue{Topic: "GoldenPopTopic", BrokerName: "broker-5b", QueueID: -1}, Mode: protocol.RequestModePop},
	}, got.Assignments)
	require.True(t, query("Nope").Null)
	require.Error(t, c.SetConsumeMode("G", "GoldenPopTopic", "push", 0))
}

// WithPopReviveDelay revives later, and an ack within the delay still counts, as on a
// real broker.
func TestPopReviveDelay(t *testing.T) {
	_, err := NewCluster(WithPopReviveDelay(-time.Second))
	require.ErrorContains(t, err, "WithPopReviveDelay")
	// The ack must come after the invisible time and before the delay ends: a delay of a
	// second leaves a loaded machine time for it.
	c := popCluster(t, WithPopReviveDelay(time.Second))
	cl := newClient(t)
	b := c.Broker("broker-5a")
	produceN(t, c, "GoldenPopTopic", 2)
	msgs := popAll(t, cl, b.Addr(), "G", "GoldenPopTopic", 20*time.Millisecond, 2)
	time.Sleep(60 * time.Millisecond) // past the invisible time, within the delay
	require.Equal(t, protocol.ResponseSuccess, cl.invoke(b.Addr(), ackRequest("G", "GoldenPopTopic", msgs[0])).Code)
	require.Eventually(t, func() bool {
		return len(b.PopRetryMessages("G", "GoldenPopTopic")) == 1
	}, 5*time.Second, 5*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	require.Len(t, b.PopRetryMessages("G", "GoldenPopTopic"), 1, "the late ack counted")
}

// A group whose committed offset fell below the queue's min offset (retention removed
// the messages) is popped from the min offset on, which is committed; the answer, the
// handles and the checkpoint still name the old offset as the start, as 5.3.3's
// popMsgFromQueue does (its finalOffset), and acks with those handles land.
func TestPopBelowMinOffsetKeepsTheOldStart(t *testing.T) {
	c := popCluster(t)
	cl := newClient(t)
	b := c.Broker("broker-5a")
	addr := b.Addr()
	for range 3 {
		_, err := b.Produce("GoldenPopTopic", 0, &message.Message{Body: []byte("x")})
		require.NoError(t, err)
	}
	b.SetCommittedOffset("Stale", "GoldenPopTopic", 0, 0)
	require.NoError(t, b.TruncateQueue("GoldenPopTopic", 0, 2))
	h, msgs := popAnswer(t, cl.invoke(addr, popRequest("Stale", "GoldenPopTopic", 0, time.Minute, 0)))
	require.Equal(t, "0 0 0", h.StartOffsetInfo)
	require.Equal(t, "0 0 2", h.MsgOffsetInfo)
	require.Len(t, msgs, 1)
	require.Equal(t, int64(0), msgs[0].handle.CkQueueOffset)
	require.Equal(t, int64(2), msgs[0].handle.QueueOffset)
	require.Len(t, b.InflightPops("Stale"), 1)
	resp := cl.invoke(addr, ackRequest("Stale", "GoldenPopTopic", msgs[0]))
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	require.Empty(t, b.InflightPops("Stale"))
	off, _ := b.CommittedOffset("Stale", "GoldenPopTopic", 0)
	require.Equal(t, int64(3), off)
}
