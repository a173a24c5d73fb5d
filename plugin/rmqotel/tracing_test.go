package rmqotel

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/plugin/internal/plugintest"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// producerContext is what OpenTelemetry's Java RocketMQ instrumentation writes into a
// message's properties when it sends (MapSetter: properties.put(key, value)) with the
// default W3C propagator.
func producerContext(i int) (trace.SpanContext, map[string]string) {
	tid := trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, byte(i)}
	sid := trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, byte(i)}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	return sc, map[string]string{
		"traceparent": "00-" + tid.String() + "-" + sid.String() + "-01",
		"tracestate":  "rojo=00f067aa0ba902b7",
	}
}

func attrMap(kvs []attribute.KeyValue) map[string]attribute.Value {
	out := map[string]attribute.Value{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value
	}
	return out
}

func TestTracingOneSpanPerMessageWithTheProducersParent(t *testing.T) {
	c := plugintest.NewCluster(t, fakebroker.WithTopic("t", 1))
	const n = 5
	plugintest.Produce(t, c, "t", n, func(i int) map[string]string {
		_, props := producerContext(i)
		props[message.PropertyTags] = "tagA"
		props[message.PropertyKeys] = "k1 k2"
		return props
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tr := NewTracing(WithTracerProvider(tp), WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))

	var mu sync.Mutex
	listenerSpans := map[trace.SpanID]string{}
	pc := plugintest.StartConsumer(t, c, "t", []consumer.Option{consumer.WithHooks(tr), consumer.WithMaxReconsumeTimes(0)},
		func(ctx context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			mu.Lock()
			defer mu.Unlock()
			listenerSpans[trace.SpanContextFromContext(ctx).SpanID()] = string(msgs[0].Body)
			if string(msgs[0].Body) == "m-4" {
				return consumer.ReconsumeLater // one failed call; MaxReconsumeTimes 0: no retry
			}
			return consumer.ConsumeSuccess
		})
	plugintest.WaitFor(t, "the spans", func() bool { return len(rec.Ended()) == n && len(c.DLQMessages("g")) == 1 })
	plugintest.Shutdown(t, pc)

	failed := 0
	for _, s := range rec.Ended() {
		mu.Lock()
		body, ok := listenerSpans[s.SpanContext().SpanID()]
		mu.Unlock()
		require.True(t, ok, "the listener's ctx carried the span")
		var i int
		_, _ = fmtSscanf(body, &i)
		want, _ := producerContext(i)
		require.Equal(t, want.TraceID(), s.Parent().TraceID(), "the producer's trace")
		require.Equal(t, want.SpanID(), s.Parent().SpanID(), "the producer's span is the parent")
		require.True(t, s.Parent().IsRemote())
		require.Equal(t, "rojo=00f067aa0ba902b7", s.Parent().TraceState().String())
		require.Equal(t, "process t", s.Name())
		require.Equal(t, trace.SpanKindConsumer, s.SpanKind())
		a := attrMap(s.Attributes())
		require.Equal(t, "rocketmq", a["messaging.system"].AsString())
		require.Equal(t, "process", a["messaging.operation.type"].AsString())
		require.Equal(t, "t", a["messaging.destination.name"].AsString())
		require.Equal(t, "g", a["messaging.rocketmq.client_group"].AsString())
		require.Equal(t, "g", a["messaging.consumer.group.name"].AsString())
		require.Equal(t, pc.ClientID(), a["messaging.client.id"].AsString())
		require.Equal(t, "clustering", a["messaging.rocketmq.consumption_model"].AsString())
		require.NotEmpty(t, a["messaging.message.id"].AsString())
		require.Equal(t, "tagA", a["messaging.rocketmq.message.tag"].AsString())
		require.Equal(t, []string{"k1", "k2"}, a["messaging.rocketmq.message.keys"].AsStringSlice())
		require.Equal(t, int64(len(body)), a["messaging.message.body.size"].AsInt64())
		if s.Status().Code == codes.Error {
			failed++
			require.Equal(t, "RECONSUME_LATER", a["error.type"].AsString())
		}
	}
	require.Equal(t, 1, failed)
}

func TestTracingBatchLinksEveryMessage(t *testing.T) {
	c := plugintest.NewCluster(t, fakebroker.WithTopic("t", 1))
	const n = 4
	plugintest.Produce(t, c, "t", n, func(i int) map[string]string { _, p := producerContext(i); return p })
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tr := NewTracing(WithTracerProvider(tp), WithPropagator(propagation.TraceContext{}))
	done := make(chan struct{}, 1)
	pc := plugintest.StartConsumer(t, c, "t", []consumer.Option{consumer.WithHooks(tr),
		consumer.WithConsumeMessageBatchMaxSize(n), consumer.WithPullBatchSize(n)},
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if len(msgs) == n {
				done <- struct{}{}
			}
			return consumer.ConsumeSuccess
		})
	<-done
	plugintest.WaitFor(t, "the span", func() bool { return len(rec.Ended()) == 1 })
	plugintest.Shutdown(t, pc)
	s := rec.Ended()[0]
	require.False(t, s.Parent().IsValid(), "a batch span is a root")
	require.Equal(t, int64(n), attrMap(s.Attributes())["messaging.batch.message_count"].AsInt64())
	require.Len(t, s.Links(), n)
	for i, l := range s.Links() {
		want, _ := producerContext(i)
		require.Equal(t, want.TraceID(), l.SpanContext.TraceID())
		require.Equal(t, want.SpanID(), l.SpanContext.SpanID())
	}
}

func fmtSscanf(body string, i *int) (int, error) { return fmt.Sscanf(body, "m-%d", i) }
