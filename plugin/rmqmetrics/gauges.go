package rmqmetrics

import (
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
)

// Gauges are a started consumer's gauge values at one moment, read from its Stats.
type Gauges struct {
	Group, ClientID string
	Topics          []TopicGauges // CachedMessages and CachedBytes
	Queues          []QueueGauges // LagMessages and LagLatency
}

// TopicGauges are one topic's cache figures, summed over its assigned queues.
type TopicGauges struct {
	Topic          string
	CachedMessages int64
	CachedBytes    int64
}

// QueueGauges are one assigned queue's lag figures.
type QueueGauges struct {
	Queue message.Queue
	// Lag is the broker max offset from the pull answers minus the committed offset;
	// LagKnown is false until both are known.
	Lag      int64
	LagKnown bool
	// LagLatencyMillis is now minus the store time of the oldest message cached and not
	// consumed yet, 0 when none is.
	LagLatencyMillis float64
}

// Read returns c's gauges at now, and false when c has not started.
func Read(c *consumer.PushConsumer, now time.Time) (Gauges, bool) {
	client := c.ClientID()
	if client == "" {
		return Gauges{}, false
	}
	st := c.Stats()
	g := Gauges{Group: c.Group(), ClientID: client}
	index := map[string]int{}
	for q, qs := range st.Queues {
		i, ok := index[q.Topic]
		if !ok {
			i = len(g.Topics)
			index[q.Topic] = i
			g.Topics = append(g.Topics, TopicGauges{Topic: q.Topic})
		}
		g.Topics[i].CachedMessages += qs.CachedMsgs
		g.Topics[i].CachedBytes += qs.CachedBytes
		qg := QueueGauges{Queue: q, Lag: qs.Lag, LagKnown: qs.CommittedOffset >= 0 && qs.BrokerMaxOffset >= 0}
		if !qs.OldestCachedStoreTime.IsZero() {
			qg.LagLatencyMillis = max(float64(now.Sub(qs.OldestCachedStoreTime))*MillisPerNanosecond, 0)
		}
		g.Queues = append(g.Queues, qg)
	}
	return g, true
}
