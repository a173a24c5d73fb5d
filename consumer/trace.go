package consumer

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"strings"

	"github.com/rmqpush/rmqpush/internal/msgtrace"
	"github.com/rmqpush/rmqpush/message"
)

// MessageTrace configures RocketMQ message trace (WithMessageTrace): the records Java's
// enableMsgTrace and rocketmq-client-go's WithTrace write, which the RocketMQ Dashboard
// and `mqadmin queryMsgTraceById` read.
type MessageTrace struct {
	// Topic is the trace topic. Default RMQ_SYS_TRACE_TOPIC, which brokers started
	// with traceTopicEnable=true create.
	Topic string
	// MaxPending is how many trace records wait at most to be sent; when the trace
	// topic is slow or unreachable the ones beyond are dropped (Stats counts them),
	// never waited for. Default 2048.
	MaxPending int
}

// WithMessageTrace turns message trace on: for every consumed message a SubBefore and
// a SubAfter record, encoded as Java's TraceDataEncoder does, are sent asynchronously
// to the trace topic (SEND_MESSAGE_V2 from the producer group
// _INNER_TRACE_PRODUCER-<group>-CONSUME-1, KEYS the traced msgIds and keys), in
// batches of up to 100 records, bodies over 4 KiB zlib-compressed, as Java does.
// Consumption never waits for it. Default: off.
func WithMessageTrace(t MessageTrace) Option { return func(c *cfg) { c.trace = &t } }

// MessageTraceStats counts message trace records (Stats.MessageTrace).
type MessageTraceStats struct {
	Sent    int64 // records sent to the trace topic
	Dropped int64 // records dropped because too many waited (MessageTrace.MaxPending)
	Failed  int64 // records whose send failed (the trace topic unreachable or refused)
}

func (t *MessageTrace) validate() error {
	if t.MaxPending < 0 {
		return optionError("WithMessageTrace", "MaxPending %d is negative", t.MaxPending)
	}
	if t.Topic != "" {
		if err := checkTopic(t.Topic); err != nil {
			return optionError("WithMessageTrace", "%v", err)
		}
	}
	return nil
}

// tracer is the message trace's consume hook, installed by NewPushConsumer when
// WithMessageTrace is on; its dispatcher is made by Start.
type tracer struct {
	c    *PushConsumer
	d    *msgtrace.Dispatcher
	reqs *msgtrace.IDGen // request ids, one per listener call
}

// startTrace creates and starts the dispatcher; Start calls it once the client
// instance exists.
func (c *PushConsumer) startTrace() error {
	if c.tracer == nil {
		return nil
	}
	ip, _, _ := strings.Cut(c.clientID, "@")
	h := fnv.New32a()
	fmt.Fprintf(h, "%s@%d", c.group, c.startTime.UnixNano())
	ids := msgtrace.NewIDGen(ip, os.Getpid(), h.Sum32())
	d, err := msgtrace.New(msgtrace.Config{
		Group:      c.names.UserGroup, // Java names the trace producer after the group as given
		Topic:      c.cfg.trace.Topic,
		MaxPending: c.cfg.trace.MaxPending,
		Sender:     c.inst,
		IDs:        ids,
		Logger:     c.log,
	})
	if err != nil {
		return err
	}
	c.tracer.d, c.tracer.reqs = d, ids
	d.Start()
	return nil
}

// OnConsumeStart appends a SubBefore record per message (Java's
// ConsumeMessageTraceHookImpl.consumeMessageBefore): messages whose TRACE_ON property
// is "false" are skipped.
func (t *tracer) OnConsumeStart(ctx context.Context, call *ConsumeCall) context.Context {
	call.traceRequestID = t.reqs.Next(call.Begin)
	ts := call.Begin.UnixMilli()
	for _, m := range call.Msgs {
		if traced(m) {
			rec := msgtrace.SubBefore{Timestamp: ts, RegionID: m.Properties.Value(message.PropertyMsgRegion), Group: t.c.names.UserGroup,
				RequestID: call.traceRequestID, MsgID: m.MsgID(), RetryTimes: m.ReconsumeTimes, Keys: m.Properties.Value(message.PropertyKeys)}
			t.d.Append(msgtrace.Entry{Topic: m.Topic, MsgID: rec.MsgID, Keys: rec.Keys, Data: rec.Append(nil)})
		}
	}
	return ctx
}

// OnConsumeEnd appends a SubAfter record per message (Java's consumeMessageAfter): the
// cost is the call's milliseconds divided among its messages, the context code Java's
// ConsumeReturnType ordinal.
func (t *tracer) OnConsumeEnd(_ context.Context, call *ConsumeCall) {
	begin := call.Begin.UnixMilli()
	end := call.Begin.Add(call.Took).UnixMilli()
	cost := (end - begin) / int64(len(call.Msgs))
	for _, m := range call.Msgs {
		if traced(m) {
			rec := msgtrace.SubAfter{RequestID: call.traceRequestID, MsgID: m.MsgID(), CostMillis: cost, Success: call.Success,
				Keys: m.Properties.Value(message.PropertyKeys), ContextCode: int(call.ReturnType), Timestamp: end, Group: t.c.names.UserGroup}
			t.d.Append(msgtrace.Entry{Topic: m.Topic, MsgID: rec.MsgID, Keys: rec.Keys, Data: rec.Append(nil)})
		}
	}
}

func traced(m *message.Ext) bool { return m.Properties.Value(message.PropertyTraceSwitch) != "false" }

// traceStats returns the trace counters (zero when off or not started).
func (c *PushConsumer) traceStats() MessageTraceStats {
	if c.tracer == nil || c.tracer.d == nil {
		return MessageTraceStats{}
	}
	d := c.tracer.d
	return MessageTraceStats{Sent: d.Sent(), Dropped: d.Dropped(), Failed: d.Failed()}
}
