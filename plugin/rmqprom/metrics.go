package rmqprom

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rmqpush/rmqpush/consumer"
	m "github.com/rmqpush/rmqpush/plugin/rmqmetrics"
)

// Metrics publishes consumers' metrics on a Prometheus registry; install it with
// consumer.WithHooks. One Metrics may serve several consumers: labels tell them apart.
type Metrics struct {
	reg                                            prometheus.Registerer
	collectors                                     []prometheus.Collector
	processTime, awaitTime, pullLatency            *prometheus.HistogramVec
	pulls, pulled, sendBacks, deadLetters, retries *prometheus.CounterVec

	calls   atomic.Pointer[map[string]*callObservers]  // by topic; copied on write
	pullObs atomic.Pointer[map[pullKey]*pullObservers] // copied on write
	mu      sync.Mutex                                 // serialises writers of calls; guards consumers
	// consumers are those whose gauges are reported.
	consumers map[*consumer.PushConsumer]struct{}
}

// callObservers are one topic's listener-call series, looked up once: observing then
// costs a few atomic operations, where WithLabelValues hashes the labels every time.
type callObservers struct {
	group, client     string
	await             prometheus.Observer
	success, failures prometheus.Observer
}

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("rmqprom: NewMetrics: the registerer is nil")
	}
	hist := func(name string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: m.Description(name), Buckets: buckets}, labels)
	}
	counter := func(name string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: m.Description(name)}, labels)
	}
	base := []string{m.LabelTopic, m.LabelGroup, m.LabelClientID}
	mt := &Metrics{
		reg:         reg,
		processTime: hist(m.ProcessTime, m.ProcessTimeBuckets(), append(base, m.LabelStatus)...),
		awaitTime:   hist(m.AwaitTime, m.AwaitTimeBuckets(), base...),
		pullLatency: hist(m.PullLatency, m.PullLatencyBuckets(), m.LabelBroker, m.LabelGroup, m.LabelClientID, m.LabelStatus),
		pulls:       counter(m.Pulls, m.LabelBroker, m.LabelGroup, m.LabelClientID, m.LabelStatus),
		pulled:      counter(m.PulledMessages, append(base, m.LabelBroker)...),
		sendBacks:   counter(m.SendBacks, append(base, m.LabelStatus)...),
		deadLetters: counter(m.DeadLetters, base...),
		retries:     counter(m.LocalRetries, base...),
		consumers:   map[*consumer.PushConsumer]struct{}{},
	}
	mt.collectors = []prometheus.Collector{mt.processTime, mt.awaitTime, mt.pullLatency, mt.pulls, mt.pulled, mt.sendBacks,
		mt.deadLetters, mt.retries, gauges{mt}}
	for i, c := range mt.collectors {
		if err := reg.Register(c); err != nil {
			for _, done := range mt.collectors[:i] {
				reg.Unregister(done)
			}
			return nil, err
		}
	}
	return mt, nil
}

// Close unregisters the metrics.
func (mt *Metrics) Close() {
	for _, c := range mt.collectors {
		mt.reg.Unregister(c)
	}
}

// OnNewConsumer starts reporting c's gauges.
func (mt *Metrics) OnNewConsumer(c *consumer.PushConsumer) {
	mt.mu.Lock()
	mt.consumers[c] = struct{}{}
	mt.mu.Unlock()
}

// OnConsumerShutdown stops reporting c's gauges.
func (mt *Metrics) OnConsumerShutdown(c *consumer.PushConsumer) {
	mt.mu.Lock()
	delete(mt.consumers, c)
	mt.mu.Unlock()
}

// observers returns a listener call's series.
func (mt *Metrics) observers(call *consumer.ConsumeCall) *callObservers {
	topic := call.Queue.Topic
	if cur := mt.calls.Load(); cur != nil {
		if o := (*cur)[topic]; o != nil && o.group == call.Group && o.client == call.ClientID {
			return o
		}
	}
	o := &callObservers{group: call.Group, client: call.ClientID,
		await:    mt.awaitTime.WithLabelValues(topic, call.Group, call.ClientID),
		success:  mt.processTime.WithLabelValues(topic, call.Group, call.ClientID, m.StatusSuccess),
		failures: mt.processTime.WithLabelValues(topic, call.Group, call.ClientID, m.StatusFailure),
	}
	mt.mu.Lock()
	defer mt.mu.Unlock()
	next := map[string]*callObservers{}
	if cur := mt.calls.Load(); cur != nil {
		if old := (*cur)[topic]; old != nil && old.group != call.Group {
			return o // another consumer's topic: not cached
		}
		next = maps.Clone(*cur)
	}
	next[topic] = o
	mt.calls.Store(&next)
	return o
}

// OnConsumeEnd observes, for each message of the call, its await time (from CachedAt to
// the call's begin) and the call's duration, as RocketMQ's clients do. Both are observed
// here, after the call, so a call costs one lookup of its series; a hook on the start
// of the call would add a second.
func (mt *Metrics) OnConsumeEnd(_ context.Context, call *consumer.ConsumeCall) {
	obs := mt.observers(call)
	o := obs.failures
	if call.Success {
		o = obs.success
	}
	took := float64(call.Took) * m.MillisPerNanosecond
	for _, msg := range call.Msgs {
		if !msg.CachedAt.IsZero() {
			obs.await.Observe(float64(call.Begin.Sub(msg.CachedAt)) * m.MillisPerNanosecond)
		}
		o.Observe(took)
	}
}

func status(err error) string {
	if err != nil {
		return m.StatusFailure
	}
	return m.StatusSuccess
}

// OnPull counts the pull and its messages and observes its latency.
func (mt *Metrics) OnPull(e consumer.PullEvent) {
	p := mt.pullSeries(e)
	if e.Err != nil {
		p.failed.Inc()
		p.failedLatency.Observe(float64(e.Took) * m.MillisPerNanosecond)
		return
	}
	p.ok.Inc()
	p.okLatency.Observe(float64(e.Took) * m.MillisPerNanosecond)
	if e.Found > 0 {
		p.pulled.Add(float64(e.Found))
	}
}

// pullKey names one queue's pull series.
type pullKey struct {
	group, client, topic, broker string
}

// pullObservers are one queue's pull series, looked up once.
type pullObservers struct {
	ok, failed               prometheus.Counter
	okLatency, failedLatency prometheus.Observer
	pulled                   prometheus.Counter
}

// pullSeries returns e's series: a copy-on-write map read without a lock, as calls.
func (mt *Metrics) pullSeries(e consumer.PullEvent) *pullObservers {
	k := pullKey{e.Group, e.ClientID, e.Queue.Topic, e.Queue.BrokerName}
	if cur := mt.pullObs.Load(); cur != nil {
		if p := (*cur)[k]; p != nil {
			return p
		}
	}
	p := &pullObservers{
		ok:            mt.pulls.WithLabelValues(k.broker, k.group, k.client, m.StatusSuccess),
		failed:        mt.pulls.WithLabelValues(k.broker, k.group, k.client, m.StatusFailure),
		okLatency:     mt.pullLatency.WithLabelValues(k.broker, k.group, k.client, m.StatusSuccess),
		failedLatency: mt.pullLatency.WithLabelValues(k.broker, k.group, k.client, m.StatusFailure),
		pulled:        mt.pulled.WithLabelValues(k.topic, k.group, k.client, k.broker),
	}
	mt.mu.Lock()
	defer mt.mu.Unlock()
	next := map[pullKey]*pullObservers{}
	if cur := mt.pullObs.Load(); cur != nil {
		next = maps.Clone(*cur)
	}
	next[k] = p
	mt.pullObs.Store(&next)
	return p
}

// OnSendBack counts send-backs and dead letters.
func (mt *Metrics) OnSendBack(e consumer.SendBackEvent) {
	mt.sendBacks.WithLabelValues(e.Msg.Topic, e.Group, e.ClientID, status(e.Err)).Inc()
	if e.DeadLetter && e.Err == nil {
		mt.deadLetters.WithLabelValues(e.Msg.Topic, e.Group, e.ClientID).Inc()
	}
}

// OnLocalRetry counts messages consumed again locally.
func (mt *Metrics) OnLocalRetry(e consumer.LocalRetryEvent) {
	mt.retries.WithLabelValues(e.Queue.Topic, e.Group, e.ClientID).Add(float64(e.Count))
}

// gauges reports the consumers' cache and lag gauges from their Stats when scraped.
type gauges struct{ mt *Metrics }

func gaugeDescs() (cachedMsgs, cachedBytes, lag, lagLatency *prometheus.Desc) {
	topicLabels := []string{m.LabelTopic, m.LabelGroup, m.LabelClientID}
	queueLabels := []string{m.LabelTopic, m.LabelGroup, m.LabelClientID, m.LabelBroker, m.LabelQueueID}
	return prometheus.NewDesc(m.CachedMessages, m.Description(m.CachedMessages), topicLabels, nil),
		prometheus.NewDesc(m.CachedBytes, m.Description(m.CachedBytes), topicLabels, nil),
		prometheus.NewDesc(m.LagMessages, m.Description(m.LagMessages), queueLabels, nil),
		prometheus.NewDesc(m.LagLatency, m.Description(m.LagLatency), queueLabels, nil)
}

// Describe sends the gauges' descriptions.
func (g gauges) Describe(ch chan<- *prometheus.Desc) {
	a, b, c, d := gaugeDescs()
	ch <- a
	ch <- b
	ch <- c
	ch <- d
}

// Collect sends every started consumer's gauges.
func (g gauges) Collect(ch chan<- prometheus.Metric) {
	cachedMsgs, cachedBytes, lag, lagLatency := gaugeDescs()
	g.mt.mu.Lock()
	cs := make([]*consumer.PushConsumer, 0, len(g.mt.consumers))
	for c := range g.mt.consumers {
		cs = append(cs, c)
	}
	g.mt.mu.Unlock()
	now := time.Now()
	for _, c := range cs {
		g, ok := m.Read(c, now)
		if !ok {
			continue // not started
		}
		for _, q := range g.Queues {
			labels := []string{q.Queue.Topic, g.Group, g.ClientID, q.Queue.BrokerName, strconv.Itoa(int(q.Queue.QueueID))}
			if q.LagKnown {
				ch <- prometheus.MustNewConstMetric(lag, prometheus.GaugeValue, float64(q.Lag), labels...)
			}
			ch <- prometheus.MustNewConstMetric(lagLatency, prometheus.GaugeValue, q.LagLatencyMillis, labels...)
		}
		for _, tg := range g.Topics {
			ch <- prometheus.MustNewConstMetric(cachedMsgs, prometheus.GaugeValue, float64(tg.CachedMessages), tg.Topic, g.Group, g.ClientID)
			ch <- prometheus.MustNewConstMetric(cachedBytes, prometheus.GaugeValue, float64(tg.CachedBytes), tg.Topic, g.Group, g.ClientID)
		}
	}
}
