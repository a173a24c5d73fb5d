package rmqotel

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
)

// Span attribute keys: the OpenTelemetry messaging semantic conventions, with their
// RocketMQ part. messaging.rocketmq.client_group is the older name of
// messaging.consumer.group.name; both are set.
const (
	attrSystem         = "messaging.system"
	attrOperationName  = "messaging.operation.name"
	attrOperationType  = "messaging.operation.type"
	attrDestination    = "messaging.destination.name"
	attrPartition      = "messaging.destination.partition.id"
	attrConsumerGroup  = "messaging.consumer.group.name"
	attrClientGroup    = "messaging.rocketmq.client_group"
	attrClientID       = "messaging.client.id"
	attrModel          = "messaging.rocketmq.consumption_model"
	attrMessageID      = "messaging.message.id"
	attrBodySize       = "messaging.message.body.size"
	attrTag            = "messaging.rocketmq.message.tag"
	attrKeys           = "messaging.rocketmq.message.keys"
	attrBatchCount     = "messaging.batch.message_count"
	attrReconsumeTimes = "messaging.rocketmq.message.reconsume_times"
	attrErrorType      = "error.type"
)

// Tracing starts a span around every listener call; install it with
// consumer.WithHooks.
type Tracing struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator

	mu    sync.Mutex                        // serialises writers of names
	names atomic.Pointer[map[string]string] // span name by topic, copied on write
}

// NewTracing returns a tracing hook using the configured TracerProvider and propagator.
func NewTracing(opts ...Option) *Tracing {
	cfg := newConfig(opts)
	return &Tracing{tracer: cfg.tracerProvider.Tracer(instrumentationName), propagator: cfg.propagator}
}

// OnConsumeStart starts the call's "process <topic>" span, a consumer span: for one
// message its parent is the context the producer propagated in the message's
// properties (the listener's context when there is none); for a batch it is a root
// span linked to each message's propagated context. The returned context, which the
// listener gets, holds the span.
func (t *Tracing) OnConsumeStart(ctx context.Context, call *consumer.ConsumeCall) context.Context {
	attrs := make([]attribute.KeyValue, 0, 16) // every attribute below without growing
	attrs = append(attrs,
		attribute.String(attrSystem, "rocketmq"),
		attribute.String(attrOperationName, "process"),
		attribute.String(attrOperationType, "process"),
		attribute.String(attrDestination, call.Queue.Topic),
		attribute.String(attrPartition, strconv.Itoa(int(call.Queue.QueueID))),
		attribute.String(attrConsumerGroup, call.Group),
		attribute.String(attrClientGroup, call.Group),
		attribute.String(attrClientID, call.ClientID),
		attribute.String(attrModel, modelName(call.Model)))
	parent := ctx
	var links []trace.Link
	if len(call.Msgs) == 1 {
		m := call.Msgs[0]
		parent = t.propagator.Extract(ctx, carrier{m})
		attrs = append(attrs, attribute.String(attrMessageID, m.MsgID()), attribute.Int(attrBodySize, len(m.Body)),
			attribute.Int(attrReconsumeTimes, int(m.ReconsumeTimes)))
		if tag := m.Tags(); tag != "" {
			attrs = append(attrs, attribute.String(attrTag, tag))
		}
		if keys := m.Keys(); len(keys) > 0 {
			attrs = append(attrs, attribute.StringSlice(attrKeys, keys))
		}
	} else {
		attrs = append(attrs, attribute.Int(attrBatchCount, len(call.Msgs)))
		for _, m := range call.Msgs {
			if sc := trace.SpanContextFromContext(t.propagator.Extract(context.Background(), carrier{m})); sc.IsValid() {
				links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String(attrMessageID, m.MsgID())}})
			}
		}
	}
	ctx, _ = t.tracer.Start(parent, t.spanName(call.Queue.Topic), trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithTimestamp(call.Begin), trace.WithAttributes(attrs...), trace.WithLinks(links...))
	return ctx
}

// spanName returns "process <topic>", built once per topic.
func (t *Tracing) spanName(topic string) string {
	if m := t.names.Load(); m != nil {
		if name, ok := (*m)[topic]; ok {
			return name
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	next := map[string]string{}
	if m := t.names.Load(); m != nil {
		next = maps.Clone(*m)
	}
	name := "process " + topic
	next[topic] = name
	t.names.Store(&next)
	return name
}

// OnConsumeEnd ends the span; a call that did not succeed sets the span's status to
// Error and error.type to the listener's status (or EXCEPTION for a panic).
func (t *Tracing) OnConsumeEnd(ctx context.Context, call *consumer.ConsumeCall) {
	span := trace.SpanFromContext(ctx)
	if !call.Success {
		why := call.Status
		if call.ReturnType == consumer.ReturnException {
			why = consumer.ReturnException.String()
		}
		span.SetAttributes(attribute.String(attrErrorType, why))
		span.SetStatus(codes.Error, why)
	}
	span.End(trace.WithTimestamp(call.Begin.Add(call.Took)))
}

// carrier reads a message's properties as a propagation carrier, as OpenTelemetry's
// Java RocketMQ instrumentation does (TextMapExtractAdapter: the property of the
// propagator's key, e.g. traceparent).
type carrier struct{ m *message.Ext }

func (c carrier) Get(key string) string { return c.m.Properties.Value(key) }

// Set does nothing: a consumer only reads the producer's context.
func (c carrier) Set(string, string) {}

func (c carrier) Keys() []string {
	var keys []string
	c.m.Properties.Range(func(name, _ string) bool {
		keys = append(keys, name)
		return true
	})
	return keys
}

// modelName is the consumption model as the semantic conventions spell it.
func modelName(m consumer.MessageModel) string {
	if m == consumer.Broadcasting {
		return "broadcasting"
	}
	return "clustering"
}
