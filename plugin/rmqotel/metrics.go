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
)

// Metric names. The first four are those of RocketMQ 5's clients (rocketmq-clients,
// HistogramEnum and GaugeEnum); the others follow their style for what RocketMQ's
// clients do not publish.
const (
	ProcessTime    = "rocketmq_process_time"             // histogram, ms: listener call duration, per message
	AwaitTime      = "rocketmq_await_time"               // histogram, ms: time in the local cache before the listener call, per message
	CachedMessages = "rocketmq_consumer_cached_messages" // gauge: messages in the local cache, per topic
	CachedBytes    = "rocketmq_consumer_cached_bytes"    // gauge, bytes: their bodies, per topic

	LagMessages      = "rocketmq_consumer_lag_messages"             // gauge: broker max offset (from pull answers) − committed offset, per queue
	LagLatency       = "rocketmq_consumer_lag_latency"              // gauge, ms: now − store time of the oldest unconsumed cached message, per queue
	Pulls            = "rocketmq_pull_total"                        // counter: pulls answered or failed, per broker
	PullLatency      = "rocketmq_pull_latency"                      // histogram, ms: pull round trip (long polls included), per broker
	PulledMessages   = "rocketmq_pulled_messages_total"             // counter: messages pulled, per topic and broker
	SendBacks        = "rocketmq_consumer_send_back_messages_total" // counter: messages handed back for a retry (or failed to be)
	DeadLetters      = "rocketmq_consumer_dlq_messages_total"       // counter: messages sent to the dead-letter queue
	LocalRetries     = "rocketmq_consumer_local_retry_messages_total"
	labelTopic       = "topic"
	labelGroup       = "consumer_group"
	labelClientID    = "client_id"
	labelStatus      = "invocation_status"
	labelBroker      = "broker"
	labelQueueID     = "queue_id"
	statusSuccess    = "success"
	statusFailure    = "failure"
	msPerNanosecond  = 1e-6
	unitMilliseconds = "ms"
)

// Histogram bucket boundaries, in milliseconds: RocketMQ 5's clients' for process and
// await time (rocketmq-clients' HistogramEnum; the site's table omits process time's
// 1000), and long-poll-aware ones for pulls, which a broker holds up to 15 s.
var (
	processTimeBuckets = []float64{1, 5, 10, 100, 1000, 10000, 60000}
	awaitTimeBuckets   = []float64{1, 5, 20, 100, 1000, 5000, 10000}
	pullLatencyBuckets = []float64{1, 5, 10, 100, 1000, 5000, 15000, 30000}
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
	hist := func(name, desc string, buckets []float64) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit(unitMilliseconds),
			metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	counter := func(name, desc string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit("{message}"))
		errs = append(errs, err)
		return c
	}
	m.processTime = hist(ProcessTime, "Listener call duration, recorded once per message of the call.", processTimeBuckets)
	m.awaitTime = hist(AwaitTime, "Time a message waited in the local cache before its listener call.", awaitTimeBuckets)
	m.pullLatency = hist(PullLatency, "Pull round trip, long polls included.", pullLatencyBuckets)
	m.pulls = counter(Pulls, "Pulls answered (success) or failed (failure).")
	m.pulledMsgs = counter(PulledMessages, "Messages pulled.")
	m.sendBacks = counter(SendBacks, "Messages handed back to the broker for a later retry (success), or that could not be (failure).")
	m.deadLetters = counter(DeadLetters, "Messages sent to the dead-letter queue.")
	m.localRetry = counter(LocalRetries, "Messages to be consumed again by this consumer: send-back failed, or an orderly queue suspended.")

	cachedMsgs, err := meter.Int64ObservableGauge(CachedMessages, metric.WithDescription("Messages pulled and not consumed yet."), metric.WithUnit("{message}"))
	errs = append(errs, err)
	cachedBytes, err := meter.Int64ObservableGauge(CachedBytes, metric.WithDescription("Body bytes of the messages pulled and not consumed yet."), metric.WithUnit("By"))
	errs = append(errs, err)
	lag, err := meter.Int64ObservableGauge(LagMessages, metric.WithDescription("Broker max offset from the pull answers minus the committed offset."), metric.WithUnit("{message}"))
	errs = append(errs, err)
	lagLatency, err := meter.Float64ObservableGauge(LagLatency, metric.WithDescription("Now minus the store time of the oldest message pulled and not consumed yet (0 when none)."), metric.WithUnit(unitMilliseconds))
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

// OnConsumeStart records each message's await time.
func (m *Metrics) OnConsumeStart(ctx context.Context, call *consumer.ConsumeCall) context.Context {
	opts := m.attrs.call(call.Group, call.ClientID, call.Queue.Topic).await
	for _, msg := range call.Msgs {
		if !msg.CachedAt.IsZero() {
			m.awaitTime.Record(ctx, float64(call.Begin.Sub(msg.CachedAt))*msPerNanosecond, opts.rec...)
		}
	}
	return ctx
}

// OnConsumeEnd records the call's duration once per message, as RocketMQ's clients do.
func (m *Metrics) OnConsumeEnd(ctx context.Context, call *consumer.ConsumeCall) {
	co := m.attrs.call(call.Group, call.ClientID, call.Queue.Topic)
	opts := co.fails
	if call.Success {
		opts = co.success
	}
	took := float64(call.Took) * msPerNanosecond
	for range call.Msgs {
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
		client := c.ClientID()
		if client == "" {
			continue // not started
		}
		st := c.Stats()
		type sums struct{ msgs, bytes int64 }
		perTopic := map[string]sums{}
		for q, qs := range st.Queues {
			s := perTopic[q.Topic]
			s.msgs += qs.CachedMsgs
			s.bytes += qs.CachedBytes
			perTopic[q.Topic] = s
			queueAttrs := metric.WithAttributes(attribute.String(labelTopic, q.Topic), attribute.String(labelGroup, c.Group()),
				attribute.String(labelClientID, client), attribute.String(labelBroker, q.BrokerName),
				attribute.String(labelQueueID, strconv.Itoa(int(q.QueueID))))
			if qs.CommittedOffset >= 0 && qs.BrokerMaxOffset >= 0 {
				o.ObserveInt64(lag, qs.Lag, queueAttrs)
			}
			latency := 0.0
			if !qs.OldestCachedStoreTime.IsZero() {
				latency = max(float64(now.Sub(qs.OldestCachedStoreTime))*msPerNanosecond, 0)
			}
			o.ObserveFloat64(lagLatency, latency, queueAttrs)
		}
		for topic, s := range perTopic {
			attrs := metric.WithAttributes(attribute.String(labelTopic, topic), attribute.String(labelGroup, c.Group()),
				attribute.String(labelClientID, client))
			o.ObserveInt64(cachedMsgs, s.msgs, attrs)
			o.ObserveInt64(cachedBytes, s.bytes, attrs)
		}
	}
}
