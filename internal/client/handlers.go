package client

import (
	"context"
	"fmt"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// The handlers below answer requests brokers start. Each runs in its own goroutine
// owned by the remoting.Client (see remoting.Handler).

func (i *Instance) handleNotifyConsumerIDsChanged(_ context.Context, addr string, req *remoting.Command) *remoting.Command {
	var h protocol.NotifyConsumerIDsChangedRequest
	if err := h.Decode(req.ExtFields); err != nil {
		i.logBadRequest(addr, req, err)
		return nil // oneway: never answered
	}
	if logging.Enabled(i.log, logging.LevelInfo) {
		i.log.Log(logging.LevelInfo, "broker says the group's members changed; rebalancing", "group", h.ConsumerGroup, "broker", addr)
	}
	if c, ok := i.consumer(h.ConsumerGroup); ok {
		c.OnConsumerIDsChanged()
	}
	return nil
}

func (i *Instance) handleResetOffset(ctx context.Context, addr string, req *remoting.Command) *remoting.Command {
	var h protocol.ResetOffsetRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return i.badRequest(addr, req, err)
	}
	var body protocol.ResetOffsetBody
	if len(req.Body) > 0 {
		if err := body.Decode(req.Body); err != nil {
			return i.badRequest(addr, req, err)
		}
	}
	c, ok := i.consumer(h.Group)
	if !ok {
		return nil
	}
	if logging.Enabled(i.log, logging.LevelInfo) {
		i.log.Log(logging.LevelInfo, "resetting offsets as a broker asks", "group", h.Group, "topic", h.Topic, "queues", len(body.OffsetTable), "broker", addr)
	}
	c.ResetOffset(ctx, h.Topic, body.OffsetTable)
	return i.success(req)
}

func (i *Instance) handleConsumerStatus(_ context.Context, addr string, req *remoting.Command) *remoting.Command {
	var h protocol.GetConsumerStatusRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return i.badRequest(addr, req, err)
	}
	table := map[message.Queue]int64{}
	if c, ok := i.consumer(h.Group); ok {
		table = c.ConsumerStatus(h.Topic)
	}
	body := protocol.ConsumerStatusBody{MessageQueueTable: table}
	resp := i.success(req)
	resp.Body = body.Encode(protocol.StyleFastjson)
	return resp
}

func (i *Instance) handleRunningInfo(_ context.Context, addr string, req *remoting.Command) *remoting.Command {
	var h protocol.GetConsumerRunningInfoRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return i.badRequest(addr, req, err)
	}
	c, ok := i.consumer(h.ConsumerGroup)
	if !ok {
		return remoting.NewResponse(req, protocol.ResponseSystemError,
			fmt.Sprintf("The Consumer Group <%s> not exist in this consumer", h.ConsumerGroup))
	}
	info := c.RunningInfo()
	if h.JstackEnable {
		info.Jstack = goroutineDump() // where Java puts its threads' stacks
	}
	resp := i.success(req)
	resp.Body = info.Encode(protocol.StyleFastjson)
	return resp
}

func (i *Instance) handleConsumeMessageDirectly(ctx context.Context, addr string, req *remoting.Command) *remoting.Command {
	var h protocol.ConsumeMessageDirectlyRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return i.badRequest(addr, req, err)
	}
	msgs, err := message.DecodeAll(req.Body)
	if err != nil || len(msgs) == 0 {
		if err == nil {
			err = fmt.Errorf("no message in the body")
		}
		return i.badRequest(addr, req, err)
	}
	c, ok := i.consumer(h.ConsumerGroup)
	if !ok {
		return remoting.NewResponse(req, protocol.ResponseSystemError,
			fmt.Sprintf("The Consumer Group <%s> not exist in this consumer", h.ConsumerGroup))
	}
	msgs[0].BrokerName = h.BrokerName
	result := c.ConsumeMessageDirectly(ctx, msgs[0], h.BrokerName)
	resp := i.success(req)
	resp.Body = result.Encode(protocol.StyleFastjson)
	return resp
}

func (i *Instance) success(req *remoting.Command) *remoting.Command {
	return remoting.NewResponse(req, protocol.ResponseSuccess, "")
}

func (i *Instance) badRequest(addr string, req *remoting.Command, err error) *remoting.Command {
	i.logBadRequest(addr, req, err)
	return remoting.NewResponse(req, protocol.ResponseSystemError, err.Error())
}

func (i *Instance) logBadRequest(addr string, req *remoting.Command, err error) {
	if logging.Enabled(i.log, logging.LevelWarn) {
		i.log.Log(logging.LevelWarn, "bad request from broker", "addr", addr,
			"code", protocol.RequestName(req.Code), "opaque", req.Opaque, "err", err)
	}
}
