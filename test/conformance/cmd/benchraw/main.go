// Command benchraw is the benchmark's ceiling: a raw puller built on rmqpush's remoting
// and internal/protocol packages alone. It keeps exactly one pull in flight per queue
// (long polling, batch 32 unless -pull-batch says otherwise), counts the records of
// each answer by hopping over their store sizes (no decoding, no cache, no listener)
// and pulls the next batch from the answer's callback. What it reaches is what the
// broker can serve to one connection; the clients are read as a fraction of it. It is
// started by cmd/bench; see package benchkit for its flags and output.
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
)

const (
	suspendMillis = 15000
	callTimeout   = 30 * time.Second
	retryDelay    = time.Second
)

type puller struct {
	rc      *remoting.Client
	o       benchkit.Options
	sink    *benchkit.Sink
	batch   int32
	stopped atomic.Bool
	errs    atomic.Int64
}

func (p *puller) Start(o benchkit.Options, sink *benchkit.Sink) error {
	ser := remoting.SerializeJSON
	switch o.Serialize {
	case "", "json":
	case "rocketmq":
		ser = remoting.SerializeRocketMQ
	default:
		return fmt.Errorf("-serialize %q: want json or rocketmq", o.Serialize)
	}
	rc, err := remoting.NewClient(remoting.WithSerialization(ser))
	if err != nil {
		return err
	}
	p.rc, p.o, p.sink = rc, o, sink
	p.batch = 32
	if o.PullBatch > 0 {
		p.batch = int32(o.PullBatch)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := protocol.GetRouteInfoRequest{Topic: o.Topic}
	resp, err := rc.Invoke(ctx, o.NameServer, remoting.NewRequest(protocol.RequestGetRouteInfoByTopic, h.Encode(), nil))
	if err != nil {
		return fmt.Errorf("route of %s: %w", o.Topic, err)
	}
	if resp.Code != protocol.ResponseSuccess {
		return fmt.Errorf("route of %s: code %d %s", o.Topic, resp.Code, resp.Remark)
	}
	var route protocol.TopicRouteData
	if err := route.Decode(resp.Body); err != nil {
		return fmt.Errorf("route of %s: %w", o.Topic, err)
	}
	queues := route.ReadableQueues(o.Topic)
	if len(queues) == 0 {
		return fmt.Errorf("topic %s has no readable queue", o.Topic)
	}
	for _, q := range queues {
		addr, ok := route.MasterAddr(q.BrokerName)
		if !ok {
			return fmt.Errorf("no master address for broker %s", q.BrokerName)
		}
		p.pull(addr, q.QueueID, 0)
	}
	return nil
}

// pull sends one pull of queue id from offset; its callback sends the next.
func (p *puller) pull(addr string, queueID int32, offset int64) {
	if p.stopped.Load() {
		return
	}
	h := protocol.PullMessageRequest{
		ConsumerGroup:        p.o.Group,
		Topic:                p.o.Topic,
		QueueID:              queueID,
		QueueOffset:          offset,
		MaxMsgNums:           p.batch,
		SysFlag:              protocol.PullSysFlagSuspend | protocol.PullSysFlagSubscription,
		SuspendTimeoutMillis: suspendMillis,
		Subscription:         "*",
		ExpressionType:       protocol.ExpressionTypeTag,
	}
	req := remoting.NewRequest(protocol.RequestPullMessage, h.Encode(), nil)
	err := p.rc.InvokeAsync(addr, req, callTimeout, func(resp *remoting.Command, err error) {
		p.answer(addr, queueID, offset, resp, err)
	})
	if err != nil {
		p.later(addr, queueID, offset)
	}
}

func (p *puller) later(addr string, queueID int32, offset int64) {
	p.errs.Add(1)
	time.AfterFunc(retryDelay, func() { p.pull(addr, queueID, offset) })
}

func (p *puller) answer(addr string, queueID int32, offset int64, resp *remoting.Command, err error) {
	if p.stopped.Load() {
		return
	}
	if err != nil {
		p.later(addr, queueID, offset)
		return
	}
	switch resp.Code {
	case protocol.ResponseSuccess, protocol.ResponsePullNotFound, protocol.ResponsePullRetryImmediately, protocol.ResponsePullOffsetMoved:
	default:
		p.later(addr, queueID, offset)
		return
	}
	var h protocol.PullMessageResponse
	if err := h.Decode(resp.ExtFields); err != nil {
		p.later(addr, queueID, offset)
		return
	}
	if resp.Code == protocol.ResponseSuccess {
		if n := countRecords(resp.Body); n > 0 {
			p.sink.Add(n)
		}
	}
	p.pull(addr, queueID, h.NextBeginOffset)
}

// countRecords counts the store records of a pull body by their store sizes.
func countRecords(body []byte) int {
	n := 0
	for off := 0; len(body)-off >= 4; n++ {
		size := int(int32(binary.BigEndian.Uint32(body[off:])))
		if size <= 0 || size > len(body)-off {
			break
		}
		off += size
	}
	return n
}

func (p *puller) Shutdown(context.Context) error {
	p.stopped.Store(true)
	return p.rc.Close()
}

func main() {
	os.Exit(benchkit.Main("raw", &puller{}, os.Args[1:], os.Stdout, os.Stderr))
}
