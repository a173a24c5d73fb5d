package rmqprom

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/plugin/internal/plugintest"
	"github.com/rmqpush/rmqpush/plugin/rmqmetrics"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestMetricsNamesLabelsAndCounts(t *testing.T) {
	c := plugintest.NewCluster(t, fakebroker.WithTopic("t", 2), fakebroker.WithDelayLevels(10*time.Millisecond, 10*time.Millisecond))
	const n = 30
	plugintest.Produce(t, c, "t", n, nil)
	reg := prometheus.NewRegistry()
	mt, err := NewMetrics(reg)
	require.NoError(t, err)
	_, err = NewMetrics(reg)
	require.Error(t, err, "registering twice on one registry fails")

	var ok atomic.Int64
	pc := plugintest.StartConsumer(t, c, "t", []consumer.Option{consumer.WithHooks(mt), consumer.WithMaxReconsumeTimes(0)},
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if string(msgs[0].Body) == "m-7" {
				return consumer.ReconsumeLater // MaxReconsumeTimes 0: straight to the dead-letter queue
			}
			ok.Add(1)
			return consumer.ConsumeSuccess
		})
	plugintest.WaitFor(t, "every message", func() bool { return ok.Load() == n-1 && len(c.DLQMessages("g")) == 1 })
	plugintest.WaitFor(t, "offsets committed", func() bool {
		for _, qs := range pc.Stats().Queues {
			if qs.Lag != 0 || qs.CachedMsgs != 0 {
				return false
			}
		}
		return true
	})
	client := pc.ClientID()

	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]*dto.MetricFamily{}
	for _, f := range families {
		got[f.GetName()] = f
	}
	counts := map[string]uint64{}
	for _, m := range got[rmqmetrics.ProcessTime].GetMetric() {
		l := labelsOf(m)
		require.Equal(t, "t", l["topic"])
		require.Equal(t, "g", l["consumer_group"])
		require.Equal(t, client, l["client_id"])
		require.Len(t, m.GetHistogram().GetBucket(), len(rmqmetrics.ProcessTimeBuckets()))
		counts[l["invocation_status"]] += m.GetHistogram().GetSampleCount()
	}
	require.Equal(t, map[string]uint64{"success": n - 1, "failure": 1}, counts)
	await := got[rmqmetrics.AwaitTime].GetMetric()
	require.Len(t, await, 1)
	require.Equal(t, uint64(n), await[0].GetHistogram().GetSampleCount())

	for _, m := range got[rmqmetrics.CachedMessages].GetMetric() {
		require.Zero(t, m.GetGauge().GetValue())
	}
	require.Contains(t, got, rmqmetrics.CachedBytes)
	queues := 0
	for _, m := range got[rmqmetrics.LagMessages].GetMetric() {
		l := labelsOf(m)
		require.Equal(t, c.Brokers()[0].Name(), l["broker"])
		require.Zero(t, m.GetGauge().GetValue())
		if l["topic"] == "t" {
			queues++
		}
	}
	require.Equal(t, 2, queues)
	require.Contains(t, got, rmqmetrics.LagLatency)

	var pulled float64
	for _, m := range got[rmqmetrics.PulledMessages].GetMetric() {
		pulled += m.GetCounter().GetValue()
	}
	require.Equal(t, float64(n), pulled)
	require.NotEmpty(t, got[rmqmetrics.Pulls].GetMetric())
	require.NotEmpty(t, got[rmqmetrics.PullLatency].GetMetric())
	sb := got[rmqmetrics.SendBacks].GetMetric()
	require.Len(t, sb, 1)
	require.Equal(t, 1.0, sb[0].GetCounter().GetValue())
	require.Equal(t, 1.0, got[rmqmetrics.DeadLetters].GetMetric()[0].GetCounter().GetValue())

	plugintest.Shutdown(t, pc)
	families, err = reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		require.NotEqual(t, rmqmetrics.CachedMessages, f.GetName(), "a shut down consumer's gauges are gone")
	}
	mt.Close()
	families, err = reg.Gather()
	require.NoError(t, err)
	require.Empty(t, families, "Close unregisters everything")
}
