package rmqotel

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/plugin/internal/plugintest"
	"github.com/rmqpush/rmqpush/plugin/rmqmetrics"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, instrumentationName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func attrsOf(s attribute.Set) map[string]string {
	out := map[string]string{}
	for _, kv := range s.ToSlice() {
		out[string(kv.Key)] = kv.Value.Emit()
	}
	return out
}

func TestMetricsNamesLabelsAndCounts(t *testing.T) {
	c := plugintest.NewCluster(t, fakebroker.WithTopic("t", 2), fakebroker.WithDelayLevels(10*time.Millisecond, 10*time.Millisecond))
	const n = 30
	plugintest.Produce(t, c, "t", n, nil)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	m, err := NewMetrics(WithMeterProvider(mp))
	require.NoError(t, err)
	defer m.Close()

	var ok, failed atomic.Int64
	pc := plugintest.StartConsumer(t, c, "t", []consumer.Option{consumer.WithHooks(m), consumer.WithMaxReconsumeTimes(0)},
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if string(msgs[0].Body) == "m-7" {
				failed.Add(1)
				return consumer.ReconsumeLater // MaxReconsumeTimes 0: straight to the dead-letter queue
			}
			ok.Add(1)
			return consumer.ConsumeSuccess
		})
	plugintest.WaitFor(t, "every message", func() bool { return ok.Load() == n-1 && len(c.DLQMessages("g")) == 1 })
	client := pc.ClientID()
	plugintest.WaitFor(t, "offsets committed", func() bool {
		for _, qs := range pc.Stats().Queues {
			if qs.Lag != 0 || qs.CachedMsgs != 0 {
				return false
			}
		}
		return true
	})

	got := collect(t, reader)
	process := got[ProcessTime].Data.(metricdata.Histogram[float64])
	require.Equal(t, "ms", got[ProcessTime].Unit)
	counts := map[string]uint64{}
	for _, dp := range process.DataPoints {
		a := attrsOf(dp.Attributes)
		require.Equal(t, "t", a["topic"])
		require.Equal(t, "g", a["consumer_group"])
		require.Equal(t, client, a["client_id"])
		require.Equal(t, rmqmetrics.ProcessTimeBuckets(), dp.Bounds)
		counts[a["invocation_status"]] += dp.Count
	}
	require.Equal(t, map[string]uint64{"success": n - 1, "failure": 1}, counts)

	await := got[AwaitTime].Data.(metricdata.Histogram[float64])
	require.Len(t, await.DataPoints, 1)
	require.Equal(t, uint64(n), await.DataPoints[0].Count)
	require.Equal(t, rmqmetrics.AwaitTimeBuckets(), await.DataPoints[0].Bounds)
	require.Equal(t, map[string]string{"topic": "t", "consumer_group": "g", "client_id": client}, attrsOf(await.DataPoints[0].Attributes))

	cached := got[CachedMessages].Data.(metricdata.Gauge[int64])
	require.NotEmpty(t, cached.DataPoints)
	for _, dp := range cached.DataPoints {
		require.Zero(t, dp.Value, "all consumed")
	}
	require.Contains(t, got, CachedBytes)

	lag := got[LagMessages].Data.(metricdata.Gauge[int64])
	queues := map[string]bool{}
	for _, dp := range lag.DataPoints {
		a := attrsOf(dp.Attributes)
		queues[a["topic"]+"/"+a["queue_id"]] = true
		require.Equal(t, c.Brokers()[0].Name(), a["broker"])
		require.Zero(t, dp.Value)
	}
	require.True(t, queues["t/0"] && queues["t/1"], "one series per queue: %v", queues)
	require.Contains(t, got, LagLatency)

	pulls := got[Pulls].Data.(metricdata.Sum[int64])
	var pullCount int64
	for _, dp := range pulls.DataPoints {
		a := attrsOf(dp.Attributes)
		require.Equal(t, c.Brokers()[0].Name(), a["broker"])
		pullCount += dp.Value
	}
	require.Positive(t, pullCount)
	pulled := got[PulledMessages].Data.(metricdata.Sum[int64])
	var pulledCount int64
	for _, dp := range pulled.DataPoints {
		pulledCount += dp.Value
	}
	require.Equal(t, int64(n), pulledCount)
	require.Contains(t, got, PullLatency)

	sendBacks := got[SendBacks].Data.(metricdata.Sum[int64])
	require.Len(t, sendBacks.DataPoints, 1)
	require.Equal(t, int64(1), sendBacks.DataPoints[0].Value)
	require.Equal(t, "success", attrsOf(sendBacks.DataPoints[0].Attributes)["invocation_status"])
	dlq := got[DeadLetters].Data.(metricdata.Sum[int64])
	require.Equal(t, int64(1), dlq.DataPoints[0].Value)

	plugintest.Shutdown(t, pc)
	require.NotContains(t, collect(t, reader), CachedMessages, "a shut down consumer's gauges are gone")
}
