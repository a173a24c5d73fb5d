package pull

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/remoting"
)

// Service is the pull service; see the package documentation.
type Service struct {
	cfg   Config
	log   logging.Logger
	queue *requestQueue[*Request]
	names client.Names // restores the topics listeners see

	bodies *bodyPool           // with LendBodies: the answers' buffers (lend.go); else nil
	src    remoting.BodySource // bodies as the pulls' BodySource, or nil

	startOnce sync.Once
	stopOnce  sync.Once
	stopped   chan struct{} // closed by Stop
	done      chan struct{} // closed when the goroutine ends

	inflight sync.WaitGroup // pulls sent and not yet answered

	turnaround     histogram     // FOUND answer read → next pull sent
	flowControlled atomic.Uint64 // times a queue was held back, for rate-limited logs
	failureLog     logLimiter    // pull failures (warnings)
	badRecordLog   logLimiter    // bodies with a bad record (errors)
	filterLog      logLimiter    // queues the broker will not filter (errors)
}

// logLimiter lets one log line through per second.
type logLimiter struct {
	last       atomic.Int64 // unix nanoseconds of the last line let through
	suppressed atomic.Int64 // lines held back since
}

// allow reports whether a line may be logged now and, if so, how many were held back
// since the last one.
func (l *logLimiter) allow() (ok bool, suppressed int64) {
	now := time.Now().UnixNano()
	last := l.last.Load()
	if now-last < int64(time.Second) || !l.last.CompareAndSwap(last, now) {
		l.suppressed.Add(1)
		return false, 0
	}
	return true, l.suppressed.Swap(0)
}

// New returns a Service for cfg. Start launches its goroutine.
func New(cfg Config) (*Service, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	setDefaults(&cfg.Logger, &cfg.Decoder, &cfg.Paused)
	s := &Service{
		cfg:     cfg,
		log:     cfg.Logger,
		names:   client.NewNames(client.Namespace(cfg.Namespace), cfg.Group),
		queue:   newRequestQueue[*Request](),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
	}
	if cfg.LendBodies {
		s.bodies = &bodyPool{}
		s.src = s.bodies
	}
	return s, nil
}

// Start launches the service's goroutine.
func (s *Service) Start() {
	s.startOnce.Do(func() { go s.run() })
}

// Stop ends the goroutine and drops every queued request; answers still on their way
// are dropped when they arrive. It waits for the goroutine, not for the broker: a held
// pull is answered (or times out) later and its answer is discarded. Call Wait to wait
// for those too.
func (s *Service) Stop() {
	s.stopOnce.Do(func() {
		close(s.stopped)
		s.queue.close()
	})
	s.startOnce.Do(func() { close(s.done) }) // never started: nothing to wait for
	<-s.done
}

// Wait waits until every pull sent has been answered or has failed. Call it after Stop
// and after the broker connections are closed, which fails the held pulls at once.
func (s *Service) Wait() { s.inflight.Wait() }

// Submit queues r to be pulled now. It never blocks; after Stop it does nothing.
func (s *Service) Submit(r *Request) { s.queue.add(r) }

// SubmitLater queues r to be pulled after d. The wait is not counted in the turnaround.
func (s *Service) SubmitLater(r *Request, d time.Duration) {
	r.answered = time.Time{}
	s.queue.addLater(r, time.Now().Add(d))
}

func (s *Service) isStopped() bool { return isClosed(s.stopped) }

// run is the service goroutine.
func (s *Service) run() {
	defer close(s.done)
	s.queue.serve(s.stopped, s.pull)
}

// pull applies flow control to r and sends its pull, or puts it back for later.
func (s *Service) pull(r *Request) {
	pq := r.PQ
	if pq.Dropped() {
		return // the queue was taken away: the request ends here
	}
	now := time.Now()
	pq.SetLastPullTime(now)
	if s.cfg.Paused() {
		s.SubmitLater(r, DelayPaused)
		return
	}
	if reason := s.flowControl(r); reason != "" {
		if n := s.flowControlled.Add(1); n%1000 == 1 && logging.Enabled(s.log, logging.LevelWarn) {
			s.log.Log(logging.LevelWarn, "pull held back by flow control", "queue", r.Queue.String(),
				"reason", reason, "cachedMsgs", pq.Count(), "cachedBytes", pq.Size(), "span", pq.MaxSpan(), "times", n)
		}
		s.SubmitLater(r, DelayFlowControl)
		return
	}
	if s.cfg.Orderly && s.cfg.Clustering && !pq.Locked() {
		s.SubmitLater(r, DelayError) // the rebalancer locks it; until then nothing is pulled
		return
	}
	sub, ok := s.cfg.Subs.Subscription(r.Queue.Topic)
	if !ok {
		s.logf(logging.LevelWarn, "no subscription for the queue's topic; pulling later", r, nil)
		s.SubmitLater(r, DelayError)
		return
	}

	addr, slave, found := s.cfg.Broker.FindBrokerAddr(r.Queue.BrokerName, r.brokerID, false)
	if !found {
		s.cfg.Broker.RequestRouteRefresh()
		s.logf(logging.LevelWarn, "broker address unknown; refreshing routes and pulling later", r, nil)
		s.SubmitLater(r, DelayError)
		return
	}
	h := &r.header
	*h = protocol.PullMessageRequest{
		ConsumerGroup:        s.cfg.Group,
		Topic:                r.Queue.Topic,
		QueueID:              r.Queue.QueueID,
		QueueOffset:          r.NextOffset,
		MaxMsgNums:           s.cfg.BatchSize,
		SysFlag:              protocol.PullSysFlagSuspend,
		SuspendTimeoutMillis: s.cfg.SuspendTimeout.Milliseconds(),
		SubVersion:           sub.SubVersion,
		ExpressionType:       sub.ExpressionType,
		BrokerName:           r.Queue.BrokerName,
	}
	// The pull carries the queue's offset (as Java's does) when the broker has more
	// messages than it: such a pull is answered at once, so an update of the offset
	// waits for it little. A pull likely to be held (nothing more to read) carries none:
	// it would keep the offset from being written by an update for as long as it is held.
	var commit offset.PullCommit
	if s.cfg.Clustering && !slave && r.NextOffset < r.brokerMax {
		var ok bool
		if commit, ok = s.cfg.Offsets.BeginPullCommit(r.Queue); ok {
			h.CommitOffset = commit.Offset()
			h.SysFlag |= protocol.PullSysFlagCommitOffset
		}
	}
	if s.cfg.PostSubscription {
		h.SysFlag |= protocol.PullSysFlagSubscription
		h.Subscription = sub.SubString
	}
	sent := time.Now()
	answered := r.answered
	r.answered = time.Time{}
	r.inflight = pullState{sub: sub, sent: sent, commit: commit}
	if r.onAnswer == nil {
		r.onAnswer = func(res *client.PullResult, err error) { s.answer(r, res, err) }
	}
	s.inflight.Add(1)
	err := s.cfg.Broker.PullAsync(addr, h, s.cfg.CallTimeout, s.src, r.onAnswer)
	if err == nil && !answered.IsZero() {
		s.turnaround.record(sent.Sub(answered))
	}
	if err != nil {
		r.inflight = pullState{}
		s.cfg.Offsets.EndPullCommit(commit, offset.CommitNotStored)
		s.inflight.Done()
		s.logf(logging.LevelWarn, "pull not sent; retrying later", r, err)
		s.SubmitLater(r, DelayError)
	}
}

// answer is the callback of r's pull in flight: it releases the pull's claim on the
// offset and handles the answer.
func (s *Service) answer(r *Request, res *client.PullResult, err error) {
	defer s.inflight.Done()
	p := r.inflight
	r.inflight = pullState{}
	s.cfg.Offsets.EndPullCommit(p.commit, commitOutcome(err))
	s.onAnswer(r, p.sub, p.sent, res, err)
}

// flowControl returns why r must wait, or "".
func (s *Service) flowControl(r *Request) string {
	lim := s.cfg.Limits(r.Queue)
	pq := r.PQ
	switch {
	case lim.Count > 0 && pq.Count() > lim.Count:
		return "cached message count over threshold"
	case lim.SizeMiB > 0 && pq.Size() > lim.SizeMiB<<20:
		return "cached message size over threshold"
	case !s.cfg.Orderly && lim.MaxSpan > 0 && pq.MaxSpan() > lim.MaxSpan:
		return "offset span of cached messages over threshold"
	}
	return ""
}

// onAnswer handles a pull's answer; it runs on a connection's read loop or a timer.
func (s *Service) onAnswer(r *Request, sub protocol.SubscriptionData, sent time.Time, res *client.PullResult, err error) {
	if s.isStopped() || r.PQ.Dropped() {
		// The request ends here: a dropped queue's answer must not touch the offset
		// store, whose entry may already belong to the queue's next request.
		return
	}
	if err != nil {
		if s.cfg.OnPulled != nil {
			s.cfg.OnPulled(r.Queue, time.Since(sent), 0, err)
		}
		if s.filterRefused(r, sub, err) { // filter_refused.go
			return
		}
		delay, heartbeat, why := retryAfter(err)
		if heartbeat {
			s.cfg.Broker.HeartbeatSoon()
		}
		s.logLimited(&s.failureLog, logging.LevelWarn, why, r, err)
		s.SubmitLater(r, delay)
		return
	}
	r.brokerID = res.SuggestWhichBrokerID
	r.brokerMax = res.MaxOffset
	r.filterAccepted()
	switch res.Status {
	case client.PullFound:
		r.answered = time.Now()
		s.found(r, sub, sent, res)
	case client.PullNoNewMsg, client.PullNoMatchedMsg:
		s.report(r, sent, 0)
		r.NextOffset = res.NextBeginOffset
		if r.PQ.Count() == 0 {
			// Java's correctTagsOffset: nothing is cached, so everything before the next
			// offset is consumed (or filtered out).
			s.cfg.Offsets.UpdateFor(r.Lease, res.NextBeginOffset, true)
		}
		s.pullNow(r)
	case client.PullOffsetIllegal:
		if logging.Enabled(s.log, logging.LevelWarn) {
			s.log.Log(logging.LevelWarn, "pull offset illegal; dropping the queue to restart it at the corrected offset",
				"queue", r.Queue.String(), "offset", r.NextOffset, "next", res.NextBeginOffset,
				"min", res.MinOffset, "max", res.MaxOffset)
		}
		r.PQ.SetDropped(true)
		if s.cfg.OnOffsetIllegal != nil {
			s.cfg.OnOffsetIllegal(r, res.NextBeginOffset)
		}
	}
}

// found handles a FOUND answer: decode, filter, cache, dispatch, and pull again.
func (s *Service) found(r *Request, sub protocol.SubscriptionData, sent time.Time, res *client.PullResult) {
	// The body is the response's own (nothing else holds it): the messages may own it,
	// their topics and properties pointing into it instead of into a copy. A lent body
	// is the pool's again once its lease is released: only Body may point into it.
	// (Called directly, not through a func value, which would move the extras to the heap.)
	extra := [2]message.Property{
		{Name: message.PropertyMinOffset, Value: strconv.FormatInt(res.MinOffset, 10)},
		{Name: message.PropertyMaxOffset, Value: strconv.FormatInt(res.MaxOffset, 10)},
	}
	var msgs []*message.Ext
	var err error
	var lease *Lease // nil unless bodies are lent
	if s.bodies != nil {
		lease = newLease(s.bodies, res.Body)
		defer lease.Release() // the service's reference, after Dispatch (orderly: Held.put) took its own
		msgs, err = s.cfg.Decoder.DecodeLent(res.Body, extra[:]...)
	} else {
		msgs, err = s.cfg.Decoder.DecodeOwned(res.Body, extra[:]...)
	}
	next := res.NextBeginOffset
	if err != nil {
		// Keep what decoded and pull the rest again from the bad record on: skipping to
		// nextBeginOffset would lose the messages after it.
		// A record that never decodes stalls its queue (the guarantee forbids skipping
		// it): this is logged at most once a second, not once per retry of every queue.
		s.logLimited(&s.badRecordLog, logging.LevelError, "pulled body has a bad record; keeping the records before it and pulling again from it", r, err)
		if len(msgs) == 0 {
			s.report(r, sent, 0)
			s.SubmitLater(r, DelayError)
			return
		}
		next = msgs[len(msgs)-1].QueueOffset + 1
	}
	s.report(r, sent, len(msgs))
	msgs = s.prepare(r, sub, msgs)
	r.NextOffset = next
	if len(msgs) == 0 {
		if r.PQ.Count() == 0 {
			s.cfg.Offsets.UpdateFor(r.Lease, next, true) // all filtered out, nothing cached
		}
		s.pullNow(r)
		return
	}
	var added []*message.Ext
	var dispatch bool
	if lease != nil && s.cfg.Orderly {
		added, dispatch = r.Held.put(r.PQ, msgs, res.MaxOffset, lease) // held until committed
	} else {
		added, dispatch = r.PQ.Put(msgs, res.MaxOffset)
	}
	// The next pull goes first: the broker works on it while the messages are handed
	// over. From here on r belongs to that pull; Dispatch reads only its queue and cache.
	if s.cfg.Interval > 0 {
		s.SubmitLater(r, s.cfg.Interval)
	} else {
		s.pullNow(r)
	}
	s.cfg.Dispatcher.Dispatch(r, added, dispatch, lease)
}

// pullNow sends r's next pull from the goroutine that handled its answer (a connection's
// read loop), without handing r to the service goroutine and waiting for it to run: the
// queue's pipeline stands still until the next pull is out, and against a busy broker
// each hand-off is throughput lost. pull never blocks: what must wait (flow control, a
// paused consumer, an unknown broker) goes back to the service goroutine on a timer.
func (s *Service) pullNow(r *Request) {
	if s.isStopped() {
		return
	}
	s.pull(r)
}

// prepare drops the messages whose tag is not subscribed (the broker filters by tag
// hash code, which can collide), and fills in what the decoder cannot know: the broker
// name, and the topic as listeners see it: a message from the retry topic gets its
// original topic back, and the namespace goes. Then the client-side filter, if any,
// drops what it refuses. It filters in place.
func (s *Service) prepare(r *Request, sub protocol.SubscriptionData, msgs []*message.Ext) []*message.Ext {
	filter := len(sub.TagsSet) > 0
	kept := msgs[:0]
	for _, m := range msgs {
		if filter && !containsTag(sub.TagsSet, m.Tags()) {
			continue
		}
		m.BrokerName = r.Queue.BrokerName
		s.names.ResetMessage(m)
		if s.cfg.Filter != nil && !s.cfg.Filter(r.Queue, m) {
			continue
		}
		kept = append(kept, m)
	}
	clear(msgs[len(kept):])
	return kept
}

func containsTag(tags []string, tag string) bool {
	if tag == "" {
		return false
	}
	for _, t := range tags {
		if t == tag {
			return true
		}
	}
	return false
}

func (s *Service) report(r *Request, sent time.Time, found int) {
	if s.cfg.OnPulled != nil {
		s.cfg.OnPulled(r.Queue, time.Since(sent), found, nil)
	}
}

// commitOutcome says what became of the offset a pull carried, from the pull's error:
// any answer of the broker's pull statuses means it processed the pull, and stored the
// offset; a refusal means it did not read it; a lost connection or a timeout leaves it
// unknown.
func commitOutcome(err error) offset.CommitOutcome {
	if err == nil {
		return offset.CommitStored // (before be: its address escapes, an allocation per pull)
	}
	var be *protocol.BrokerError
	var ce *remoting.ConnError
	switch {
	case errors.As(err, &be):
		return offset.CommitNotStored
	case errors.As(err, &ce) && ce.Dialing():
		return offset.CommitNotStored // never sent: the broker is down
	default:
		return offset.CommitUnknown
	}
}

// retryAfter says how long a request whose pull failed with err waits before it is
// pulled again, whether a heartbeat must be sent at once, and what to log.
func retryAfter(err error) (delay time.Duration, heartbeat bool, why string) {
	var ce *remoting.ConnError
	switch {
	case errors.Is(err, protocol.ResponseCodeError(protocol.ResponseFlowControl)):
		return DelayBrokerFlowControl, false, "broker flow control; pulling again shortly"
	case errors.Is(err, protocol.ResponseCodeError(protocol.ResponseSubscriptionNotExist)),
		errors.Is(err, protocol.ResponseCodeError(protocol.ResponseSubscriptionNotLatest)),
		errors.Is(err, protocol.ResponseCodeError(protocol.ResponseSubscriptionGroupNotExist)),
		errors.Is(err, protocol.ResponseCodeError(protocol.ResponseFilterDataNotLatest)):
		// The broker has not got our heartbeat (a restart, a race with the first one):
		// send it now rather than at the next 30 s tick, and pull again as soon as it
		// can have arrived.
		return DelayAwaitHeartbeat, true, "pull refused until the broker has our heartbeat; heartbeat sent"
	case errors.As(err, &ce):
		// The broker is not reachable (restarting, killed): try again sooner than after
		// a broker error, so consumption resumes soon after it is back.
		return DelayConnError, false, "broker unreachable; pulling again shortly"
	default:
		return DelayError, false, "pull failed; retrying later"
	}
}

// logLimited logs a pull failure through l, at most once a second per service: during
// an outage every queue fails every second.
func (s *Service) logLimited(l *logLimiter, level logging.Level, msg string, r *Request, err error) {
	ok, suppressed := l.allow()
	if ok && logging.Enabled(s.log, level) {
		s.log.Log(level, msg, "queue", r.Queue.String(), "offset", r.NextOffset, "err", err,
			"suppressedSinceLast", suppressed)
	}
}

func (s *Service) logf(level logging.Level, msg string, r *Request, err error) {
	if !logging.Enabled(s.log, level) {
		return
	}
	if err != nil {
		s.log.Log(level, msg, "queue", r.Queue.String(), "offset", r.NextOffset, "err", err)
	} else {
		s.log.Log(level, msg, "queue", r.Queue.String(), "offset", r.NextOffset)
	}
}

// Turnaround returns the turnaround figures since Start; see Turnaround.
func (s *Service) Turnaround() Turnaround { return s.turnaround.summary() }

// Pending returns the number of requests queued or waiting for a delay.
func (s *Service) Pending() int { return s.queue.len() }
