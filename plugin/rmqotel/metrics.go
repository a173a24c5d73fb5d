package rmqotel

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/plugin/rmqmetrics"
)

// Metric and label names, and buckets: package rmqmetrics, shared with plugin/rmqprom.
const (
	ProcessTime    = rmqmetrics.ProcessTime
	AwaitTime      = rmqmetrics.AwaitTime
	CachedMessages = rmqmetrics.CachedMessages
	CachedBytes    = rmqmetrics.CachedBytes
	LagMessages    = rmqmetrics.LagMessages
	LagLatency     = rmqmetrics.LagLatency
	Pulls          = rmqmetrics.Pulls
	PullLatency    = rmqmetrics.PullLatency
	PulledMessages = rmqmetrics.PulledMessages
	SendBacks      = rmqmetrics.SendBacks
	DeadLetters    = rmqmetrics.DeadLetters
	LocalRetries   = rmqmetrics.LocalRetries

	labelTopic       = rmqmetrics.LabelTopic
	labelGroup       = rmqmetrics.LabelGroup
	labelClientID    = rmqmetrics.LabelClientID
	labelStatus      = rmqmetrics.LabelStatus
	labelBroker      = rmqmetrics.LabelBroker
	labelQueueID     = rmqmetrics.LabelQueueID
	statusSuccess    = rmqmetrics.StatusSuccess
	statusFailure    = rmqmetrics.StatusFailure
	msPerNanosecond  = rmqmetrics.MillisPerNanosecond
	unitMilliseconds = "ms"
)

// Metrics records a consumer's metrics; install it with consumer.WithHooks. One Metrics
// may serve several consumers: labels tell them apart.
type Metrics struct {
	processTime, awaitTime, pullLatency                   metric.Float64Histogram
	pulls, pulledMsgs, sendBacks, deadLetters, localRetry metric.Int64Counter

	attrs attrCache

	mu        sync.Mutex
	consumers map[*consumer.PushConsumer]struct{} // read by the gauge callback
	reg       metric.Registration
}

// NewMetrics creates the instruments on the configured MeterProvider. The returned
// Metrics is a consumer hook.
func NewMetrics(opts ...Option) (*Metrics, error) {
	cfg := newConfig(opts)
	meter := cfg.meterProvider.Meter(instrumentationName)
	m := &Metrics{consumers: map[*consumer.PushConsumer]struct{}{}}
	var errs []error
	hist := func(name string, buckets []float64) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithDescription(rmqmetrics.Description(name)), metric.WithUnit(unitMilliseconds),
			metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	counter := func(name string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithDescription(rmqmetrics.Description(name)), metric.WithUnit("{message}"))
		errs = append(errs, err)
		return c
	}
	m.processTime = hist(ProcessTime, rmqmetrics.ProcessTimeBuckets())
	m.awaitTime = hist(AwaitTime, rmqmetrics.AwaitTimeBuckets())
	m.pullLatency = hist(PullLatency, rmqmetrics.PullLatencyBuckets())
	m.pulls = counter(Pulls)
	m.pulledMsgs = counter(PulledMessages)
	m.sendBacks = counter(SendBacks)
	m.deadLetters = counter(DeadLetters)
	m.localRetry = counter(LocalRetries)

	cachedMsgs, err := meter.Int64ObservableGauge(CachedMessages, metric.WithDescription(rmqmetrics.Description(CachedMessages)), metric.WithUnit("{message}"))
	errs = append(errs, err)
	cachedBytes, err := meter.Int64ObservableGauge(CachedBytes, metric.WithDescription(rmqmetrics.Description(CachedBytes)), metric.WithUnit("By"))
	errs = append(errs, err)
	lag, err := meter.Int64ObservableGauge(LagMessages, metric.WithDescription(rmqmetrics.Description(LagMessages)), metric.WithUnit("{message}"))
	errs = append(errs, err)
	lagLatency, err := meter.Float64ObservableGauge(LagLatency, metric.WithDescription(rmqmetrics.Description(LagLatency)), metric.WithUnit(unitMilliseconds))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	m.reg, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		m.observe(o, cachedMsgs, cachedBytes, lag, lagLatency, time.Now())
		return nil
	}, cachedMsgs, cachedBytes, lag, lagLatency)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Close unregisters the gauges' callback.
func (m *Metrics) Close() error { return m.reg.Unregister() }

// OnNewConsumer starts reporting c's gauges.
func (m *Metrics) OnNewConsumer(c *consumer.PushConsumer) {
	m.mu.Lock()
	m.consumers[c] = struct{}{}
	m.mu.Unlock()
}

// OnConsumerShutdown stops reporting c's gauges.
func (m *Metrics) OnConsumerShutdown(c *consumer.PushConsumer) {
	m.mu.Lock()
	delete(m.consumers, c)
	m.mu.Unlock()
}

// OnConsumeEnd records, for each message of the call, its await time (from CachedAt to
// the call's begin) and the call's duration, as RocketMQ's clients do. Both are
// recorded here, after the call, so a call costs one lookup of its label sets.
func (m *Metrics) OnConsumeEnd(ctx context.Context, call *consumer.ConsumeCall) {
	co := m.attrs.call(call.Group, call.ClientID, call.Queue.Topic)
	opts := co.fails
	if call.Success {
		opts = co.success
	}
	took := float64(call.Took) * msPerNanosecond
	for _, msg := range call.Msgs {
		if !msg.CachedAt.IsZero() {
			m.awaitTime.Record(ctx, float64(call.Begin.Sub(msg.CachedAt))*msPerNanosecond, co.await.rec...)
		}
		m.processTime.Record(ctx, took, opts.rec...)
	}
}

// OnPull counts the pull and its messages and records its latency.
func (m *Metrics) OnPull(e consumer.PullEvent) {
	ctx := context.Background()
	status := statusSuccess
	if e.Err != nil {
		status = statusFailure
	}
	opts := m.attrs.get(attrKey{kind: kindBrokerStatus, group: e.Group, client: e.ClientID, a: e.Queue.BrokerName, b: status})
	m.pulls.Add(ctx, 1, opts.add...)
	m.pullLatency.Record(ctx, float64(e.Took)*msPerNanosecond, opts.rec...)
	if e.Found > 0 {
		m.pulledMsgs.Add(ctx, int64(e.Found), m.attrs.get(attrKey{kind: kindTopicBroker, group: e.Group, client: e.ClientID, a: e.Queue.Topic, b: e.Queue.BrokerName}).add...)
	}
}

// OnSendBack counts send-backs and dead letters.
func (m *Metrics) OnSendBack(e consumer.SendBackEvent) {
	ctx := context.Background()
	status := statusSuccess
	if e.Err != nil {
		status = statusFailure
	}
	m.sendBacks.Add(ctx, 1, m.attrs.get(attrKey{kind: kindTopicStatus, group: e.Group, client: e.ClientID, a: e.Msg.Topic, b: status}).add...)
	if e.DeadLetter && e.Err == nil {
		m.deadLetters.Add(ctx, 1, m.attrs.get(attrKey{kind: kindTopic, group: e.Group, client: e.ClientID, a: e.Msg.Topic}).add...)
	}
}

// OnLocalRetry counts messages consumed again locally.
func (m *Metrics) OnLocalRetry(e consumer.LocalRetryEvent) {
	m.localRetry.Add(context.Background(), int64(e.Count),
		m.attrs.get(attrKey{kind: kindTopic, group: e.Group, client: e.ClientID, a: e.Queue.Topic}).add...)
}

// observe reports the gauges of every consumer that has started.
func (m *Metrics) observe(o metric.Observer, cachedMsgs, cachedBytes, lag metric.Int64ObservableGauge, lagLatency metric.Float64ObservableGauge, now time.Time) {
	m.mu.Lock()
	cs := make([]*consumer.PushConsumer, 0, len(m.consumers))
	for c := range m.consumers {
		cs = append(cs, c)
	}
	m.mu.Unlock()
	for _, c := range cs {
		g, ok := rmqmetrics.Read(c, now)
		if !ok {
			continue // not started
		}
		for _, q := range g.Queues {
			queueAttrs := metric.WithAttributes(attribute.String(labelTopic, q.Queue.Topic), attribute.String(labelGroup, g.Group),
				attribute.String(labelClientID, g.ClientID), attribute.String(labelBroker, q.Queue.BrokerName),
				attribute.String(labelQueueID, strconv.Itoa(int(q.Queue.QueueID))))
			if q.LagKnown {
				o.ObserveInt64(lag, q.Lag, queueAttrs)
			}
			o.ObserveFloat64(lagLatency, q.LagLatencyMillis, queueAttrs)
		}
		for _, tg := range g.Topics {
			attrs := metric.WithAttributes(attribute.String(labelTopic, tg.Topic), attribute.String(labelGroup, g.Group),
				attribute.String(labelClientID, g.ClientID))
			o.ObserveInt64(cachedMsgs, tg.CachedMessages, attrs)
			o.ObserveInt64(cachedBytes, tg.CachedBytes, attrs)
		}
	}
}
