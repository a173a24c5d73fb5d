package fakebroker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

func TestViewMessageByID(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t, remoting.SerializeRocketMQ)
	h := cl.send(b.Addr(), "T", 0, "seen")
	_, offset, err := message.ParseOffsetMsgID(h.MsgID)
	require.NoError(t, err)
	vh := protocol.ViewMessageByIDRequest{Offset: offset}
	resp := cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestViewMessageByID, vh.Encode(), nil))
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	require.Equal(t, remoting.SerializeJSON, resp.Serialize, "a zero-copy answer: JSON header (golden e2)")
	require.Equal(t, golden(t, "e2_mqadmin_rocketmq", "0074").Serialize, resp.Serialize)
	require.Equal(t, keys(golden(t, "e2_mqadmin_rocketmq", "0074")), keys(resp))
	msgs, err := message.DecodeAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, []string{"seen"}, bodies(msgs))
	vh.Offset++
	resp = cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestViewMessageByID, vh.Encode(), nil))
	require.Equal(t, protocol.ResponseSystemError, resp.Code)
	require.Equal(t, fmt.Sprintf("can not find message by the offset, %d", offset+1), resp.Remark)
	require.Equal(t, remoting.SerializeRocketMQ, resp.Serialize)
}

func TestConsumerRunningInfoAndConsumeDirectly(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1))
	b := c.Broker("broker-a")
	cl := newClient(t)
	info := protocol.ConsumerRunningInfo{Properties: map[string]string{protocol.PropConsumeType: "CONSUME_PASSIVELY"}}
	cl.setAnswer(func(req *remoting.Command) *remoting.Command {
		resp := remoting.NewResponse(req, protocol.ResponseSuccess, "")
		switch req.Code {
		case protocol.RequestGetConsumerRunningInfo:
			resp.Body = info.Encode(protocol.StyleFastjson)
		case protocol.RequestConsumeMessageDirectly:
			r := protocol.ConsumeMessageDirectlyResult{AutoCommit: true, ConsumeResult: protocol.CRSuccess}
			resp.Body = r.Encode(protocol.StyleFastjson)
		case protocol.RequestGetConsumerStatusFromClient:
			body := protocol.ConsumerStatusBody{MessageQueueTable: map[message.Queue]int64{{Topic: "T", BrokerName: "broker-a"}: 4}}
			resp.Body = body.Encode(protocol.StyleFastjson)
		}
		return resp
	})
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "*")
	cl.nextInbound()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()

	got, err := b.ConsumerRunningInfo(ctx, "G", "cid", false)
	require.NoError(t, err)
	require.Equal(t, "CONSUME_PASSIVELY", got.Properties[protocol.PropConsumeType])
	req := cl.nextInbound()
	want := golden(t, "d_admin_running_consumer", "0056")
	require.ElementsMatch(t, keys(want), keys(req))
	require.Equal(t, want.Serialize, req.Serialize)
	require.Equal(t, want.Flag, req.Flag)

	h := cl.send(b.Addr(), "T", 0, "direct")
	res, err := b.ConsumeMessageDirectly(ctx, "G", "cid", h.MsgID)
	require.NoError(t, err)
	require.Equal(t, protocol.CRSuccess, res.ConsumeResult)
	req = cl.nextInbound()
	want = golden(t, "d2_consume_directly", "0050")
	require.ElementsMatch(t, keys(want), keys(req))
	require.Equal(t, "broker-a", req.ExtFields.Value("brokerName"))
	msgs, err := message.DecodeAll(req.Body)
	require.NoError(t, err)
	require.Equal(t, []string{"direct"}, bodies(msgs))

	status, err := b.ConsumerStatus(ctx, "G", "T", "")
	require.NoError(t, err)
	require.Equal(t, map[string]map[message.Queue]int64{"cid": {{Topic: "T", BrokerName: "broker-a"}: 4}}, status)
	require.Equal(t, protocol.RequestGetConsumerStatusFromClient, cl.nextInbound().Code)

	_, err = b.ConsumerRunningInfo(ctx, "G", "nobody", false)
	require.ErrorContains(t, err, "not online")
	cl.setAnswer(func(req *remoting.Command) *remoting.Command {
		return remoting.NewResponse(req, protocol.ResponseSystemError, "no such group")
	})
	_, err = b.ConsumerRunningInfo(ctx, "G", "cid", false)
	require.ErrorIs(t, err, protocol.ResponseCodeError(protocol.ResponseSystemError))
}

func TestResetOffsetByTime(t *testing.T) {
	c := startCluster(t, WithTopic("T", 2))
	b := c.Broker("broker-a")
	cl := newClient(t)
	for range 3 {
		cl.send(b.Addr(), "T", 0, "m")
		cl.send(b.Addr(), "T", 1, "m")
	}
	_, err := c.ResetOffsetByTime("G", "T", -1, false)
	require.ErrorContains(t, err, "THe consumer group <G> not exist")
	b.SetCommittedOffset("G", "T", 0, 1)
	b.SetCommittedOffset("G", "T", 1, 2)
	_, err = c.ResetOffsetByTime("G", "T", -1, false)
	require.ErrorContains(t, err, "CONSUMER_NOT_ONLINE")
	cl.heartbeat(b.Addr(), "cid", "G", 1, "T", "*")
	cl.nextInbound()
	q0, q1 := message.Queue{Topic: "T", BrokerName: "broker-a"}, message.Queue{Topic: "T", BrokerName: "broker-a", QueueID: 1}
	// To the max offsets, not forced: the committed ones are smaller and stay.
	offs, err := c.ResetOffsetByTime("G", "T", -1, false)
	require.NoError(t, err)
	require.Equal(t, map[message.Queue]int64{q0: 1, q1: 2}, offs)
	req := cl.nextInbound()
	want := golden(t, "d_admin_running_consumer", "0093")
	require.Equal(t, want.Code, req.Code)
	require.Equal(t, want.Flag, req.Flag)
	require.ElementsMatch(t, keys(want), keys(req))
	require.Equal(t, "false", req.ExtFields.Value("isForce"))
	var body protocol.ResetOffsetBody
	require.NoError(t, body.Decode(req.Body))
	require.Equal(t, offs, body.OffsetTable)
	// Back to the start, forced.
	offs, err = c.ResetOffsetByTime("G", "T", 0, true)
	require.NoError(t, err)
	require.Equal(t, map[message.Queue]int64{q0: 0, q1: 0}, offs)
	// Over the wire, as mqadmin does it.
	h := protocol.ResetOffsetRequest{Topic: "T", Group: "G", Timestamp: time.Now().Add(time.Hour).UnixMilli(), IsForce: true}
	resp := cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestInvokeBrokerToResetOffset, h.Encode(), nil))
	require.Equal(t, protocol.ResponseSuccess, resp.Code)
	require.Equal(t, "not set any response code", resp.Remark)
	require.NoError(t, body.Decode(resp.Body))
	require.Equal(t, map[message.Queue]int64{q0: 2, q1: 2}, body.OffsetTable, "the last message, not the max offset")
}
