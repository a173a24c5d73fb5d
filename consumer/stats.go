package consumer

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/pull"
)

// Stats is a snapshot of a consumer's statistics.
type Stats struct {
	// Topics holds per-topic figures; rates are over about the last minute (since the
	// topic's first pull, before that).
	Topics map[string]TopicStats
	// Queues holds the state of each assigned queue.
	Queues map[message.Queue]QueueStats
	// MessageTrace counts the message trace's records (WithMessageTrace).
	MessageTrace MessageTraceStats
	// PullTurnaround is how long the consumer took, since Start, from reading a pull's
	// FOUND answer to sending the queue's next pull, when nothing held that pull back.
	PullTurnaround pull.Turnaround
	// Pop counts what POP consumption did since Start (WithClientRebalance(false) and a
	// group set to POP); all zero otherwise.
	Pop PopStats
}

// PopStats count what became of popped messages since Start. Queues consumed by POP
// appear in Stats.Queues too, with the messages popped and not handed back yet as
// CachedMsgs and no offsets (CommittedOffset and BrokerMaxOffset -1).
type PopStats struct {
	Popped       int64 // messages popped
	Acked        int64 // acks the brokers took
	LateAcks     int64 // acks sent after the message's invisible time ended (the broker may have given it to another member)
	AckFailed    int64 // acks not taken: those messages are delivered again
	Retried      int64 // failed messages made invisible for their retry delay
	RetryFailed  int64 // of them, whose invisible time could not be changed (they come back after their pop's)
	Extended     int64 // invisible times extended for messages still waiting for, or in, their listener call
	ExtendFailed int64 // extensions that failed
	DeadLettered int64 // messages sent to the dead-letter queue, then acked
	Abandoned    int64 // messages whose invisible time ended before their listener call: delivered to another pop
	Filtered     int64 // messages acked without a listener call: another tag, or refused by WithMessageFilter
	Requests     PopRequests
}

// PopRequests count the requests of POP consumption since Start.
type PopRequests struct {
	Pops        int64 // POP_MESSAGE
	NotFound    int64 // of them, answered without messages (the poll time ended)
	PollingFull int64 // of them, answered POLLING_FULL
	Failed      int64 // of them, failed
	BatchAcks   int64 // BATCH_ACK_MESSAGE
	Acks        int64 // ACK_MESSAGE
	Changes     int64 // CHANGE_MESSAGE_INVISIBLETIME
}

// TopicStats are one topic's figures (Java's ConsumeStatus, plus totals).
type TopicStats struct {
	PullRT           time.Duration // mean pull round trip, long polls included
	PullTPS          float64       // messages pulled per second
	ConsumeRT        time.Duration // mean listener call duration
	ConsumeOKTPS     float64       // messages consumed per second
	ConsumeFailedTPS float64       // messages failed per second

	PulledMsgs        int64 // messages pulled since Start
	ConsumedMsgs      int64 // messages consumed successfully since Start
	ConsumeFailedMsgs int64 // messages whose listener call failed, since Start
	FilteredMsgs      int64 // messages a WithMessageFilter filter kept from the listener, since Start
}

// QueueStats is one assigned queue's state.
type QueueStats struct {
	CachedMsgs      int64 // pulled and not yet consumed
	CachedBytes     int64 // their body bytes
	CommittedOffset int64 // the offset the consumer will commit (-1 if none yet)
	BrokerMaxOffset int64 // the broker's max offset at the last pull (-1 if unknown)
	Lag             int64 // BrokerMaxOffset - CommittedOffset, when both are known

	// OldestCachedStoreTime is when the broker stored the oldest message cached and not
	// consumed yet (zero when none is): now minus it is the queue's consumer lag
	// latency as this client sees it.
	OldestCachedStoreTime time.Time

	// FilterRefused is the broker's answer when it refuses to filter the queue's pulls
	// by an SQL92 subscription (it cannot parse the expression, or it lacks
	// enablePropertyFilter): nothing is pulled from the queue meanwhile. "" otherwise.
	FilterRefused string
}

// statsWindow is how many samples rates are computed over; sampled every statsEvery.
const (
	statsWindow = 7
	statsEvery  = 10 * time.Second
)

// stats collects the counters; sample() keeps a ring of snapshots for rates.
//
// Every listener call looks its topic up, so the topic map is copied on write and read
// without a lock: a read-write mutex made every call write the lock's shared counter
// twice, from every worker. Topics are only ever added, and rarely.
type stats struct {
	mu     sync.Mutex                                // serialises adding topics, sample and snapshot
	topics atomic.Pointer[map[string]*topicCounters] // never changed in place
}

type topicCounters struct {
	pulls, pullNanos, pulled        atomic.Int64
	calls, consumeNanos, ok, failed atomic.Int64
	filtered                        atomic.Int64 // by WithMessageFilter
	since                           time.Time    // when the topic was first counted: rates before the first sample start there
	ring                            [statsWindow]sample
	ringLen, ringNext               int // guarded by stats.mu
}

type sample struct {
	at                                                 time.Time
	pulls, pullNanos, pulled, calls, nanos, ok, failed int64
}

func newStats() *stats {
	s := &stats{}
	s.topics.Store(&map[string]*topicCounters{})
	return s
}

func (s *stats) topic(t string) *topicCounters {
	if tc := (*s.topics.Load())[t]; tc != nil {
		return tc
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := *s.topics.Load()
	if tc := cur[t]; tc != nil {
		return tc
	}
	tc := &topicCounters{since: time.Now()}
	next := maps.Clone(cur)
	next[t] = tc
	s.topics.Store(&next)
	return tc
}

// pulled records an answered pull.
func (s *stats) pulled(topic string, rt time.Duration, found int) {
	tc := s.topic(topic)
	tc.pulls.Add(1)
	tc.pullNanos.Add(int64(rt))
	tc.pulled.Add(int64(found))
}

// consumed records a listener call over n messages of which those up to ackIndex
// succeeded (all when ok and ackIndex >= n-1). ackIndex must be clamped to [-1, n-1]
// (see ackIndex): the listener's raw value may overflow ackIndex+1.
func (s *stats) consumed(topic string, took time.Duration, ok bool, n, ackIndex int) {
	var t callTally
	t.add(took, ok, n, ackIndex)
	s.record(topic, &t)
}

// callTally adds up listener calls of one topic, for a run of calls to record them at
// once: a map lookup and four atomic adds on counters every worker and read loop
// shares, per run instead of per call.
type callTally struct {
	calls, nanos, ok, failed int64
}

// add counts one call, as consumed describes.
func (t *callTally) add(took time.Duration, ok bool, n, ackIndex int) {
	good := 0
	if ok {
		good = min(ackIndex+1, n)
	}
	t.calls++
	t.nanos += int64(took)
	t.ok += int64(good)
	t.failed += int64(n - good)
}

// record adds t to topic's counters and empties it.
func (s *stats) record(topic string, t *callTally) {
	if t.calls == 0 {
		return
	}
	tc := s.topic(topic)
	tc.calls.Add(t.calls)
	tc.consumeNanos.Add(t.nanos)
	tc.ok.Add(t.ok)
	tc.failed.Add(t.failed)
	*t = callTally{}
}

func (tc *topicCounters) now(at time.Time) sample {
	return sample{at: at, pulls: tc.pulls.Load(), pullNanos: tc.pullNanos.Load(), pulled: tc.pulled.Load(),
		calls: tc.calls.Load(), nanos: tc.consumeNanos.Load(), ok: tc.ok.Load(), failed: tc.failed.Load()}
}

// sample stores a snapshot of every topic's counters; the scheduler calls it every
// statsEvery.
func (s *stats) sample(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tc := range *s.topics.Load() {
		tc.ring[tc.ringNext] = tc.now(at)
		tc.ringNext = (tc.ringNext + 1) % statsWindow
		tc.ringLen = min(tc.ringLen+1, statsWindow)
	}
}

// snapshot returns each topic's figures, rates taken against the oldest sample.
func (s *stats) snapshot(at time.Time) map[string]TopicStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	topics := *s.topics.Load()
	out := make(map[string]TopicStats, len(topics))
	for name, tc := range topics {
		cur := tc.now(at)
		var old sample
		if tc.ringLen > 0 {
			old = tc.ring[(tc.ringNext-tc.ringLen+statsWindow)%statsWindow]
		} else {
			old.at = tc.since // within the first statsEvery: rates since the topic's first pull
		}
		ts := TopicStats{PulledMsgs: cur.pulled, ConsumedMsgs: cur.ok, ConsumeFailedMsgs: cur.failed, FilteredMsgs: tc.filtered.Load()}
		if d := cur.pulls - old.pulls; d > 0 {
			ts.PullRT = time.Duration((cur.pullNanos - old.pullNanos) / d)
		}
		if d := cur.calls - old.calls; d > 0 {
			ts.ConsumeRT = time.Duration((cur.nanos - old.nanos) / d)
		}
		if !old.at.IsZero() {
			if secs := at.Sub(old.at).Seconds(); secs > 0 {
				ts.PullTPS = float64(cur.pulled-old.pulled) / secs
				ts.ConsumeOKTPS = float64(cur.ok-old.ok) / secs
				ts.ConsumeFailedTPS = float64(cur.failed-old.failed) / secs
			}
		}
		out[name] = ts
	}
	return out
}
