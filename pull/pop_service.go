package pull

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/remoting"
)

// PopBroker is what the PopService needs from the client instance. A call that returns
// an error never calls its callback; one that returns nil calls it once.
type PopBroker interface {
	// FindBrokerAddr returns the address of broker brokerName's node brokerID; see Broker.
	FindBrokerAddr(brokerName string, brokerID int64, onlyThisBroker bool) (addr string, slave, found bool)
	// PopAsync sends a pop; callback gets its result or error on another goroutine.
	// bodies, when not nil, lends the buffer the answer's body is read into.
	PopAsync(addr string, h *protocol.PopMessageRequest, timeout time.Duration, bodies remoting.BodySource, callback func(*client.PopResult, error)) error
	// AckAsync sends an ack; callback gets nil or the error.
	AckAsync(addr string, h *protocol.AckMessageRequest, timeout time.Duration, callback func(error)) error
	// BatchAckAsync sends a batch of acks; callback gets nil or the error.
	BatchAckAsync(addr string, b *protocol.BatchAckRequest, timeout time.Duration, callback func(error)) error
	// ChangeInvisibleTimeAsync changes a message's invisible time; callback gets its new
	// handle or the error.
	ChangeInvisibleTimeAsync(addr string, h *protocol.ChangeInvisibleTimeRequest, timeout time.Duration, callback func(protocol.ExtraInfo, error)) error
	// RequestRouteRefresh asks for the routes to be fetched again without waiting.
	RequestRouteRefresh()
}

// PopDispatcher receives the batches of messages pops returned: the consume service.
// DispatchPop must not block.
type PopDispatcher interface {
	// DispatchPop hands over what a pop of r returned (b has at least one message).
	DispatchPop(r *PopRequest, b *processqueue.PopBatch)
}

// PopConfig configures a PopService.
type PopConfig struct {
	Group      string           // the consumer group, on the wire
	Namespace  string           // the group's namespace: popped topics lose it before dispatch
	Broker     PopBroker        // the client instance
	Dispatcher PopDispatcher    // the consume service
	Subs       Subscriptions    // the consumer's subscriptions
	Decoder    *message.Decoder // decodes popped bodies
	Logger     logging.Logger   // nil: no logging

	// Limits returns a queue's flow-control limits: Count is Java's
	// popThresholdForQueue (messages popped and not handed back), SizeMiB their body
	// MiB; MaxSpan is not used.
	Limits func(q message.Queue) Limits

	BatchSize      int32         // popBatchNums (32)
	InvisibleTime  time.Duration // popInvisibleTime (60 s)
	PollTime       time.Duration // how long the broker may hold a pop that finds nothing (15 s)
	RequestTimeout time.Duration // acks and invisible-time changes (3 s)
	Interval       time.Duration // pause after a pop that found messages (0)
	// AckLinger is how long an ack may wait for others to the same broker to go in one
	// BATCH_ACK_MESSAGE; 0 sends each at once, as Java's ACK_MESSAGE per message.
	AckLinger time.Duration
	// MaxHold bounds how long after its pop a message's invisible time is still
	// extended while it waits or is consumed (the consume timeout).
	MaxHold time.Duration

	// Paused reports whether the consumer is suspended.
	Paused func() bool
	// Filter, when set, keeps from the listener the messages it returns false for,
	// after the tag check; they are acked, as Java acks what its filter hooks drop.
	Filter func(q message.Queue, m *message.Ext) bool
	// OnPulled reports each pop, as a pull: rt from sending it to its answer, the
	// messages found, and err when it failed.
	OnPulled func(q message.Queue, rt time.Duration, found int, err error)
	// DeadLetter sends a message to the dead-letter queue (CONSUMER_SEND_MSG_BACK with
	// delay level -1) and reports whether it did; the message is then acked.
	DeadLetter func(m *message.Ext) bool
	// Async runs fn later on a goroutine that may wait on the network: a dead-letter
	// send whose extension was in flight when its listener call ended.
	Async func(fn func())

	// LendBodies reads pop answers into reused buffers, as Config.LendBodies does pull
	// answers (lend.go): a batch's buffer goes back to the pool once every message of
	// it has had its result applied, dead-letter sends included.
	LendBodies bool
}

func (c *PopConfig) check() error {
	switch {
	case c.Broker == nil:
		return errors.New("pull: pop: no Broker")
	case c.Dispatcher == nil:
		return errors.New("pull: pop: no Dispatcher")
	case c.Subs == nil:
		return errors.New("pull: pop: no Subscriptions")
	case c.Limits == nil:
		return errors.New("pull: pop: no Limits")
	case c.DeadLetter == nil || c.Async == nil:
		return errors.New("pull: pop: no DeadLetter or Async")
	case c.BatchSize <= 0 || c.BatchSize > 32:
		return errors.New("pull: pop: BatchSize must be 1 to 32")
	case c.InvisibleTime <= 0 || c.PollTime < 0 || c.RequestTimeout <= 0 || c.MaxHold <= 0:
		return errors.New("pull: pop: InvisibleTime, RequestTimeout and MaxHold must be positive, PollTime not negative")
	}
	return nil
}

// popCallGrace is how much longer than the poll time a pop's answer is waited for, as
// Java's popAsync adds 10 s to its timeout.
const popCallGrace = 10 * time.Second

// PopService is the POP counterpart of Service: one goroutine that drains pop requests,
// applies flow control and sends asynchronous long-polled POP_MESSAGE requests; each
// answer is decoded on the connection's read loop, given its handles, filtered and
// dispatched, and the queue's next pop is sent from there. It also sends what becomes of
// each popped message (pop_ack.go) and extends the invisible time of those still waiting
// or being consumed (pop_extend.go).
type PopService struct {
	cfg    PopConfig
	log    logging.Logger
	queue  *requestQueue[*popPipe]
	names  client.Names
	acks   *acker
	bodies *bodyPool           // with LendBodies: the answers' buffers; else nil
	src    remoting.BodySource // bodies as the pops' BodySource, or nil

	startOnce sync.Once
	stopOnce  sync.Once
	stopped   chan struct{} // closed by Stop
	done      chan struct{} // closed when the goroutine ends
	inflight  sync.WaitGroup

	counters       PopCounters
	hands          pendingCalls // acks and invisible-time changes in flight, for Flush
	reqMu          sync.Mutex
	reqs           map[*PopRequest]struct{} // requests with messages not handed back: what Extend looks at
	flowControlled atomic.Uint64
	failureLog     logLimiter
	badAnswerLog   logLimiter
	handLog        logLimiter // failed acks, changes and extensions
}

// PopCounters count what a PopService did with popped messages since it started.
type PopCounters struct {
	Popped       atomic.Int64 // messages popped
	Acked        atomic.Int64 // acks the brokers answered SUCCESS (late ones included)
	LateAcks     atomic.Int64 // acks sent after the message's invisible time was over: the broker may have given it to another pop
	AckFailed    atomic.Int64 // acks not answered SUCCESS, or not sent: the messages come back
	Retried      atomic.Int64 // failed messages made invisible for their retry delay
	RetryFailed  atomic.Int64 // those whose invisible time could not be changed: they come back after their pop's
	Extended     atomic.Int64 // invisible times extended for messages still waiting or being consumed
	ExtendFailed atomic.Int64 // extensions that failed
	DeadLettered atomic.Int64 // messages sent to the dead-letter queue (and acked)
	Abandoned    atomic.Int64 // messages not consumed here: their handle expired before their listener call, or the consumer shut down first
	Filtered     atomic.Int64 // messages acked without a listener call: not of a subscribed tag, or refused by the filter
	BadAnswers   atomic.Int64 // pop answers whose messages could not be given handles (left to come back)
	BatchAcks    atomic.Int64 // BATCH_ACK_MESSAGE requests sent
	SingleAcks   atomic.Int64 // ACK_MESSAGE requests sent
	ChangeReqs   atomic.Int64 // CHANGE_MESSAGE_INVISIBLETIME requests sent
	PopsSent     atomic.Int64 // POP_MESSAGE requests sent
	PopsNotFound atomic.Int64 // of them, answered with nothing (POLLING_TIMEOUT)
	PollingFull  atomic.Int64 // of them, answered POLLING_FULL
	PopErrors    atomic.Int64 // of them, failed
}

// NewPopService returns a PopService for cfg. Start launches its goroutine.
func NewPopService(cfg PopConfig) (*PopService, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	setDefaults(&cfg.Logger, &cfg.Decoder, &cfg.Paused)
	s := &PopService{
		cfg:     cfg,
		log:     cfg.Logger,
		queue:   newRequestQueue[*popPipe](),
		names:   client.NewNames(client.Namespace(cfg.Namespace), cfg.Group),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
		reqs:    make(map[*PopRequest]struct{}),
	}
	s.acks = newAcker(s)
	if cfg.LendBodies {
		s.bodies = &bodyPool{}
		s.src = s.bodies
	}
	return s, nil
}

// Start launches the service's goroutine.
func (s *PopService) Start() {
	s.startOnce.Do(func() { go s.run() })
}

// Stop ends the goroutine and drops every queued pop request: no pop is sent any more.
// Pops in flight are answered (or fail) later; what they bring is not dispatched, and
// comes back from the broker once its invisible time is over. Acks and changes still go
// out until Flush; invisible times are no longer extended (Extend).
func (s *PopService) Stop() {
	s.stopOnce.Do(func() {
		close(s.stopped)
		s.queue.close()
	})
	s.startOnce.Do(func() { close(s.done) })
	<-s.done
}

// Wait waits until every pop sent has been answered or has failed. Call it after Stop
// and after the broker connections are closed.
func (s *PopService) Wait() { s.inflight.Wait() }

// Submit starts r's pops: InFlight of them, each sent again as soon as it is answered,
// until r's queue is dropped. It never blocks; after Stop it does nothing.
func (s *PopService) Submit(r *PopRequest) {
	for range max(r.InFlight, 1) {
		s.queue.add(&popPipe{r: r})
	}
}

// later queues p to be popped after d.
func (s *PopService) later(p *popPipe, d time.Duration) { s.queue.addLater(p, time.Now().Add(d)) }

// Counters returns the service's counters.
func (s *PopService) Counters() *PopCounters { return &s.counters }

// Pending returns the number of pop requests queued or waiting for a delay.
func (s *PopService) Pending() int { return s.queue.len() }

func (s *PopService) isStopped() bool { return isClosed(s.stopped) }

// run is the pop service goroutine.
func (s *PopService) run() {
	defer close(s.done)
	s.queue.serve(s.stopped, s.pop)
}

// pop applies flow control to p's request and sends its pop, or puts it back for later
// (Java's popMessage).
func (s *PopService) pop(p *popPipe) {
	r := p.r
	pq := r.PQ
	if pq.Dropped() {
		return
	}
	now := time.Now()
	pq.SetLastPopTime(now)
	if s.cfg.Paused() {
		s.later(p, DelayPaused)
		return
	}
	lim := s.cfg.Limits(r.Queue)
	if (lim.Count > 0 && pq.Count() > lim.Count) || (lim.SizeMiB > 0 && pq.Size() > lim.SizeMiB<<20) {
		if n := s.flowControlled.Add(1); n%1000 == 1 && logging.Enabled(s.log, logging.LevelWarn) {
			s.log.Log(logging.LevelWarn, "pop held back: too many popped messages waiting for their acks", "queue", r.Queue.String(),
				"waiting", pq.Count(), "bytes", pq.Size(), "times", n)
		}
		s.later(p, DelayFlowControl)
		return
	}
	sub, ok := s.cfg.Subs.Subscription(r.Queue.Topic)
	if !ok {
		s.logLimited(&s.failureLog, logging.LevelWarn, "no subscription for the popped topic; popping later", r, nil)
		s.later(p, DelayError)
		return
	}
	addr, _, found := s.cfg.Broker.FindBrokerAddr(r.Queue.BrokerName, client.MasterID, true)
	if !found {
		s.cfg.Broker.RequestRouteRefresh()
		s.logLimited(&s.failureLog, logging.LevelWarn, "broker address unknown; refreshing routes and popping later", r, nil)
		s.later(p, DelayError)
		return
	}
	h := protocol.PopMessageRequest{
		PollTime:      s.cfg.PollTime.Milliseconds(),
		InvisibleTime: s.cfg.InvisibleTime.Milliseconds(),
		QueueID:       r.Queue.QueueID,
		BornTime:      now.UnixMilli(),
		MaxMsgNums:    s.cfg.BatchSize,
		BrokerName:    r.Queue.BrokerName,
		Topic:         r.Queue.Topic,
		ExpType:       sub.ExpressionType,
		Exp:           sub.SubString,
		ConsumerGroup: s.cfg.Group,
		InitMode:      r.InitMode,
	}
	if p.onAnswer == nil {
		p.onAnswer = func(res *client.PopResult, err error) { s.answer(p, res, err) }
	}
	p.sent, p.addr = now, addr
	s.inflight.Add(1)
	s.counters.PopsSent.Add(1)
	if err := s.cfg.Broker.PopAsync(addr, &h, s.cfg.PollTime+popCallGrace, s.src, p.onAnswer); err != nil {
		s.inflight.Done()
		s.counters.PopErrors.Add(1)
		s.logLimited(&s.failureLog, logging.LevelWarn, "pop not sent; retrying later", r, err)
		s.later(p, DelayError)
	}
}

// answer handles a pop's answer; it runs on a connection's read loop or a timer.
func (s *PopService) answer(p *popPipe, res *client.PopResult, err error) {
	defer s.inflight.Done()
	r := p.r
	rt := time.Since(p.sent)
	if s.isStopped() {
		return // what it popped comes back once its invisible time is over
	}
	if err != nil {
		s.counters.PopErrors.Add(1)
		s.report(r, rt, 0, err)
		delay, _, why := retryAfter(err)
		s.logLimited(&s.failureLog, logging.LevelWarn, "pop failed: "+why, r, err)
		s.again(p, delay)
		return
	}
	switch res.Status {
	case client.PopFound:
		p.early = 0
		n := s.found(p, res)
		s.report(r, rt, n, nil)
		if s.cfg.Interval > 0 {
			s.again(p, s.cfg.Interval)
		} else {
			s.again(p, 0)
		}
	case client.PopNotFound:
		s.counters.PopsNotFound.Add(1)
		s.report(r, rt, 0, nil)
		s.again(p, s.notFoundDelay(p, rt))
	default: // PopPollingFull
		s.counters.PollingFull.Add(1)
		s.report(r, rt, 0, nil)
		s.again(p, DelayError)
	}
}

// earlyNotFoundDelay is the first delay after NOT_FOUND answers that keep coming long
// before the poll time; it doubles with each one up to DelayError.
const earlyNotFoundDelay = 50 * time.Millisecond

// notFoundDelay is how long p waits before popping again after a NOT_FOUND answer that
// came rt after its pop was sent. A broker holds a pop that finds nothing for the poll
// time, so the next pop goes at once. One that answers at once, pop after pop, is not
// long polling: a 5.x broker answers POLLING_TIMEOUT at once ("timeout too much") when
// this client's clock is behind its own by more than the poll time, and popping again
// at once would loop at round-trip speed on both sides. The first early answer is
// followed at once (a held pop woken for a message another pop took first ends early
// too); from the second in a row on, p waits, and a warning says why.
func (s *PopService) notFoundDelay(p *popPipe, rt time.Duration) time.Duration {
	if s.cfg.PollTime == 0 || rt >= s.cfg.PollTime/2 {
		p.early = 0
		return 0
	}
	p.early++
	if p.early == 1 {
		return 0
	}
	s.logLimited(&s.failureLog, logging.LevelWarn, fmt.Sprintf(
		"the broker answers pops %v after they are sent, not after the poll time (%v): is this client's clock behind the broker's? popping more slowly", rt, s.cfg.PollTime), p.r, nil)
	return min(earlyNotFoundDelay<<min(p.early-2, 5), DelayError)
}

// again pops p again after d, from this goroutine when d is 0 (see Service.pullNow),
// unless its queue was dropped.
func (s *PopService) again(p *popPipe, d time.Duration) {
	switch {
	case s.isStopped() || p.r.PQ.Dropped():
	case d > 0:
		s.later(p, d)
	default:
		s.pop(p)
	}
}

// found decodes a FOUND answer, gives the messages their handles, acks the ones the
// subscription or filter refuses (as Java does), and dispatches the rest as a batch; it
// returns how many came.
func (s *PopService) found(p *popPipe, res *client.PopResult) int {
	r := p.r
	// A record that does not decode ends what decodes: the records before it are
	// consumed (their handles are the first the answer lists for their queues); it and
	// those after it come back once their invisible time is over, as Java's would.
	var msgs []*message.Ext
	var decodeErr error
	var lease *Lease // nil unless bodies are lent
	if s.bodies != nil {
		lease = newLease(s.bodies, res.Body)
		defer lease.Release() // the service's reference, after each kept message took one
		msgs, decodeErr = s.cfg.Decoder.DecodeLent(res.Body)
	} else {
		msgs, decodeErr = s.cfg.Decoder.DecodeOwned(res.Body)
	}
	if err := client.SetPopHandles(r.Queue.BrokerName, &res.Header, msgs); err != nil {
		// Without handles the messages cannot be acked: consuming them would only
		// consume them twice. They come back once their invisible time is over.
		s.counters.BadAnswers.Add(1)
		s.logLimited(&s.badAnswerLog, logging.LevelError, "pop answer from "+p.addr+" cannot be read; its messages come back after their invisible time", r, err)
		return 0
	}
	if decodeErr != nil {
		s.counters.BadAnswers.Add(1)
		s.logLimited(&s.badAnswerLog, logging.LevelError, fmt.Sprintf(
			"pop answer from %s has a bad record; consuming the %d before it, the rest come back after their invisible time", p.addr, len(msgs)), r, decodeErr)
	}
	n := len(msgs)
	s.counters.Popped.Add(int64(n))
	// The deadline as this client's clock sees it: from when the pop was sent, never
	// later than the broker's.
	deadline := p.sent.Add(time.Duration(res.Header.InvisibleTime) * time.Millisecond)
	sub, _ := s.cfg.Subs.Subscription(r.Queue.Topic)
	userTopic := s.names.UserTopic(r.Queue.Topic)
	handles := make([]string, 0, n)
	kept := msgs[:0]
	for _, m := range msgs {
		handle := m.Properties.Value(protocol.PropertyPopCK)
		m.Topic = userTopic // the topic popped for (Java's processPopResponse), without the namespace
		if (len(sub.TagsSet) > 0 && !containsTag(sub.TagsSet, m.Tags())) || (s.cfg.Filter != nil && !s.cfg.Filter(r.Queue, m)) {
			s.counters.Filtered.Add(1)
			s.acks.ack(r.Queue.Topic, handle, false)
			continue
		}
		kept = append(kept, m)
		handles = append(handles, handle)
	}
	clear(msgs[len(kept):])
	if len(kept) > 0 {
		var bodies processqueue.BodyLease
		if lease != nil {
			lease.Acquire(len(kept)) // one per message, released when its result is applied
			bodies = lease
		}
		b := processqueue.NewPopBatch(kept, handles, p.sent, deadline, bodies)
		r.PQ.Add(b)
		s.track(r)
		s.cfg.Dispatcher.DispatchPop(r, b)
	}
	return n
}

func (s *PopService) report(r *PopRequest, rt time.Duration, found int, err error) {
	if s.cfg.OnPulled != nil {
		s.cfg.OnPulled(r.Queue, rt, found, err)
	}
}

// logLimited logs through l, at most once a second.
func (s *PopService) logLimited(l *logLimiter, level logging.Level, msg string, r *PopRequest, err error) {
	ok, suppressed := l.allow()
	if !ok || !logging.Enabled(s.log, level) {
		return
	}
	kv := []any{"queue", r.Queue.String(), "suppressedSinceLast", suppressed}
	if err != nil {
		kv = append(kv, "err", err)
	}
	s.log.Log(level, msg, kv...)
}
