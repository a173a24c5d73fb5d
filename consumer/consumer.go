package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
	"github.com/rmqpush/rmqpush/rebalance"
)

// Consumer states.
const (
	stateNew int32 = iota
	stateStarting
	stateRunning
	stateShutdown
)

// consumeService is what both consume services (concurrent, orderly) offer.
type consumeService interface {
	pull.Dispatcher
	start()
	stop(ctx context.Context) error
	expire(r *pull.Request, now time.Time)
	consumeDirectly(ctx context.Context, msg *message.Ext, brokerName string) *protocol.ConsumeMessageDirectlyResult
	// The rebalancer's hooks (see rebalance.Config).
	beforeAdd(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue) bool
	cancelAdd(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue)
	beforeRemove(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue, release bool) bool
	afterRemove(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue, release bool)
}

// PushConsumer consumes the messages of its subscriptions and calls its listener with
// them; see the package documentation. It is safe for concurrent use.
type PushConsumer struct {
	group  string       // the group on the wire (in the namespace, if any)
	names  client.Names // the group's and topics' names on the wire and as the user gave them
	cfg    cfg
	log    logging.Logger
	hooks  hookSet
	tracer *tracer // message trace; nil when off

	mu        sync.Mutex // guards state changes, subscriptions before Start, listener
	state     atomic.Int32
	subs      atomic.Pointer[map[string]protocol.SubscriptionData]
	listener  any // ConcurrentlyListener or OrderlyListener
	startTime time.Time

	// Set by Start.
	clientID   string
	inst       *client.Instance
	offsets    offset.Store
	puller     *pull.Service
	popService *pull.PopService // with WithClientRebalance(false): POP consumption (pop.go); nil otherwise
	rebalancer *rebalance.Rebalancer
	service    consumeService
	idle       *idleWork  // the read loops' idle runs (inline.go); nil when off
	sched      *scheduler // short jobs: delayed re-consumption, timeout checks, statistics
	brokerJobs *scheduler // jobs that wait on brokers (offset writes), kept off sched so its timers stay on time
	lockJobs   *scheduler // orderly clustering: lock renewal, kept off brokerJobs so a slow broker's writes cannot let locks expire; nil otherwise
	stats      *stats

	// Start and Shutdown: Shutdown during Start sets shutdownAsked, cancels Start and
	// waits for startDone. ready is set once Start succeeded.
	cancelStart   context.CancelFunc
	startDone     chan struct{}
	shutdownAsked atomic.Bool
	ready         atomic.Bool

	paused      atomic.Bool
	commitArmed atomic.Bool                    // a commit of moved offsets is scheduled
	assigned    atomic.Pointer[map[string]int] // assigned queues per topic
	listenerCtx context.Context                // given to listeners and broker calls of the consumer's own; cancelled by Shutdown once listeners are done or it gives up
	cancelCalls context.CancelFunc
}

// NewPushConsumer returns a consumer of group with opts applied. Every option is checked
// here; the error names the option at fault.
func NewPushConsumer(group string, opts ...Option) (*PushConsumer, error) {
	if err := checkGroup(group); err != nil {
		return nil, err
	}
	c := defaultCfg()
	for _, o := range opts {
		o(&c)
	}
	if err := c.resolveNameServers(os.Getenv); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	names := c.names(group)
	if len(names.Group) > 255 {
		return nil, optionError("WithNamespace", "the group in the namespace, %q, is longer than 255 characters", names.Group)
	}
	pc := &PushConsumer{group: names.Group, names: names, cfg: c, log: c.logger, hooks: newHookSet(c.hooks), stats: newStats()}
	if c.trace != nil {
		pc.tracer = &tracer{c: pc}
		pc.hooks.start = append(pc.hooks.start, pc.tracer)
		pc.hooks.end = append(pc.hooks.end, pc.tracer)
	}
	empty := map[string]protocol.SubscriptionData{}
	pc.subs.Store(&empty)
	for _, h := range pc.hooks.newConsumer {
		h.OnNewConsumer(pc)
	}
	return pc, nil
}

// checkGroup applies Java's group name rules.
func checkGroup(group string) error {
	if group == "" {
		return errors.New("consumer: the consumer group is empty")
	}
	if len(group) > 255 {
		return fmt.Errorf("consumer: the consumer group is longer than 255 characters")
	}
	for _, r := range group {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '%' || r == '|') {
			return fmt.Errorf("consumer: the consumer group %q has a character outside [%%|a-zA-Z0-9_-]", group)
		}
	}
	if group == "DEFAULT_CONSUMER" {
		return errors.New("consumer: the consumer group DEFAULT_CONSUMER is reserved; choose another name")
	}
	return nil
}

// Group returns the consumer group as given to NewPushConsumer (without the namespace).
func (c *PushConsumer) Group() string { return c.names.UserGroup }

// ClientID returns the consumer's client id (ip@instance), or "" before Start.
func (c *PushConsumer) ClientID() string {
	if c.state.Load() == stateNew {
		return ""
	}
	return c.clientID
}

// Subscribe subscribes to topic's messages that sel selects. Call it before Start; a
// second call for the same topic replaces the first.
func (c *PushConsumer) Subscribe(topic string, sel Selector) error {
	if err := checkTopic(topic); err != nil {
		return err
	}
	if sel.kind == "" {
		sel = All()
	}
	if sel.kind == protocol.ExpressionTypeSQL92 {
		if err := checkSQL92(sel.expr); err != nil {
			return fmt.Errorf("consumer: Subscribe(%q, %s): %w", topic, sel, err)
		}
	}
	wire := c.names.NS.Wrap(topic) // the topic on the wire, in the namespace
	if len(wire) > 127 && !strings.HasPrefix(wire, "%") {
		return fmt.Errorf("consumer: Subscribe(%q): the topic in the namespace, %q, is longer than 127 characters", topic, wire)
	}
	sd, err := protocol.BuildSubscriptionOfType(wire, sel.kind, sel.expr)
	if err != nil {
		return fmt.Errorf("consumer: Subscribe(%q, %q): %w", topic, sel.expr, err)
	}
	sd.SubVersion = time.Now().UnixMilli()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Load() != stateNew {
		return fmt.Errorf("consumer: Subscribe(%q): %w", topic, ErrStarted)
	}
	next := maps.Clone(*c.subs.Load())
	next[wire] = sd
	c.subs.Store(&next)
	return nil
}

func checkTopic(topic string) error {
	if topic == "" {
		return errors.New("consumer: the topic is empty")
	}
	if len(topic) > 127 && !strings.HasPrefix(topic, "%") {
		return fmt.Errorf("consumer: the topic %q is longer than 127 characters", topic)
	}
	return nil
}

// RegisterListener sets the listener: a ConcurrentlyListener (ConcurrentlyFunc) for
// concurrent consumption or an OrderlyListener (OrderlyFunc) for orderly consumption.
// Call it once, before Start.
func (c *PushConsumer) RegisterListener(l any) error {
	switch l.(type) {
	case ConcurrentlyListener, OrderlyListener:
	case nil:
		return errors.New("consumer: RegisterListener: the listener is nil")
	default:
		return fmt.Errorf("consumer: RegisterListener: %T is neither a ConcurrentlyListener nor an OrderlyListener", l)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Load() != stateNew {
		return fmt.Errorf("consumer: RegisterListener: %w", ErrStarted)
	}
	if c.listener != nil {
		return errors.New("consumer: RegisterListener: a listener is already registered")
	}
	c.listener = l
	return nil
}

// Subscription returns topic's subscription; it satisfies pull.Subscriptions.
func (c *PushConsumer) subscription(topic string) (protocol.SubscriptionData, bool) {
	sd, ok := (*c.subs.Load())[topic]
	return sd, ok
}

// topics returns the subscribed topics, the retry topic included, sorted.
func (c *PushConsumer) topics() []string {
	return slices.Sorted(maps.Keys(*c.subs.Load()))
}

// Suspend stops pulling: queues wait (retrying every second) until Resume. Listener
// calls in flight finish normally.
func (c *PushConsumer) Suspend() { c.paused.Store(true) }

// Resume undoes Suspend and rebalances at once.
func (c *PushConsumer) Resume() {
	c.paused.Store(false)
	if c.ready.Load() {
		c.rebalancer.Trigger()
	}
}

// Stats returns a snapshot of the consumer's statistics.
func (c *PushConsumer) Stats() Stats {
	now := time.Now()
	out := Stats{Topics: map[string]TopicStats{}, Queues: map[message.Queue]QueueStats{}}
	for topic, ts := range c.stats.snapshot(now) {
		out.Topics[c.names.UserTopic(topic)] = ts
	}
	if !c.ready.Load() {
		return out // the fields below are set by a successful Start
	}
	out.MessageTrace = c.traceStats()
	out.PullTurnaround = c.puller.Turnaround()
	committed := c.offsets.Table()
	for _, r := range c.rebalancer.Requests() {
		q, pq := r.Queue, r.PQ
		qs := QueueStats{CachedMsgs: pq.Count(), CachedBytes: pq.Size(), CommittedOffset: -1, BrokerMaxOffset: pq.BrokerMaxOffset(),
			FilterRefused: r.FilterRefused()}
		if ts, ok := pq.OldestStoreTimestamp(); ok {
			qs.OldestCachedStoreTime = time.UnixMilli(ts)
		}
		if off, ok := committed[q]; ok {
			qs.CommittedOffset = off
		}
		if qs.CommittedOffset >= 0 && qs.BrokerMaxOffset >= 0 {
			qs.Lag = max(qs.BrokerMaxOffset-qs.CommittedOffset, 0)
		}
		out.Queues[c.names.UserQueue(q)] = qs
	}
	if c.popService != nil {
		c.popStats(&out) // pop.go
	}
	return out
}

// maxReconsumeTimes returns the effective MaxReconsumeTimes.
func (c *PushConsumer) maxReconsumeTimes() int32 {
	if c.cfg.maxReconsumeTimes >= 0 {
		return int32(c.cfg.maxReconsumeTimes)
	}
	if orderlyListener(c.listener) {
		return int32(^uint32(0) >> 1) // unlimited, as Java's Integer.MAX_VALUE
	}
	return defaultMaxReconsumeConcurrently
}

// sendBack asks the broker to deliver msg again later (CONSUMER_SEND_MSG_BACK), falling
// back to sending a copy to the retry topic; it reports whether either worked.
func (c *PushConsumer) sendBack(msg *message.Ext, delayLevel int32) bool {
	var begin time.Time
	if len(c.hooks.sendBack) > 0 {
		begin = time.Now()
	}
	ctx := c.listenerCtx // ends when Shutdown gives up on the listeners
	maxTimes := c.maxReconsumeTimes()
	err := c.inst.SendMessageBack(ctx, c.group, msg, delayLevel, maxTimes)
	if err == nil {
		c.sentBack(SendBackEvent{Msg: msg, DelayLevel: delayLevel}, begin, maxTimes)
		return true
	}
	c.logMsg(logging.LevelWarn, "send-back failed; sending the message to the retry topic instead", msg.Queue(), msg, err)
	if err := c.inst.SendRetryMessage(ctx, c.group, msg, maxTimes); err != nil {
		c.logMsg(logging.LevelError, "retry-topic fallback failed too; the message will be consumed again here in 5s", msg.Queue(), msg, err)
		c.sentBack(SendBackEvent{Msg: msg, DelayLevel: delayLevel, Fallback: true, Err: err}, begin, maxTimes)
		return false
	}
	c.sentBack(SendBackEvent{Msg: msg, DelayLevel: delayLevel, Fallback: true}, begin, maxTimes)
	return true
}

// sentBack tells the send-back hooks about e, which began at begin, with DeadLetter set
// by deadLetter.
func (c *PushConsumer) sentBack(e SendBackEvent, begin time.Time, maxReconsumeTimes int32) {
	if len(c.hooks.sendBack) == 0 {
		return
	}
	e.Group, e.ClientID = c.names.UserGroup, c.clientID
	e.DeadLetter = deadLetter(e, maxReconsumeTimes)
	e.Took = time.Since(begin)
	for _, h := range c.hooks.sendBack {
		h.OnSendBack(e)
	}
}

// deadLetter reports whether the send-back e put its message in %DLQ%<group>, by the
// broker's rules for the path it took. CONSUMER_SEND_MSG_BACK dead-letters with a
// negative delay level or when the message's reconsume times reached the maximum. The
// fallback's copy ignores the delay level and carries one more reconsume time, which
// the broker dead-letters when it exceeds the maximum (5.x compares with >; older
// brokers with >= also dead-letter the copy that only reaches it, which this does not
// report). Nothing is dead-lettered when both failed.
func deadLetter(e SendBackEvent, maxReconsumeTimes int32) bool {
	switch {
	case e.Err != nil:
		return false
	case e.Fallback:
		return e.Msg.ReconsumeTimes >= maxReconsumeTimes // the copy's +1 > max, without overflow
	default:
		return e.DelayLevel < 0 || e.Msg.ReconsumeTimes >= maxReconsumeTimes
	}
}

// retriedLocally tells the local-retry hooks that n messages of q are consumed again
// here after delay.
func (c *PushConsumer) retriedLocally(q message.Queue, n int, delay time.Duration) {
	if len(c.hooks.retry) == 0 {
		return
	}
	e := LocalRetryEvent{Group: c.names.UserGroup, ClientID: c.clientID, Queue: c.names.UserQueue(q), Count: n, Delay: delay}
	for _, h := range c.hooks.retry {
		h.OnLocalRetry(e)
	}
}

// pulled is the pull service's OnPulled: statistics, and the pull hooks.
func (c *PushConsumer) pulled(q message.Queue, took time.Duration, found int, err error) {
	if err == nil {
		c.stats.pulled(q.Topic, took, found)
	}
	if len(c.hooks.pull) > 0 {
		e := PullEvent{Group: c.names.UserGroup, ClientID: c.clientID, Queue: c.names.UserQueue(q), Took: took, Found: found, Err: err}
		for _, h := range c.hooks.pull {
			h.OnPull(e)
		}
	}
}

func (c *PushConsumer) logf(level logging.Level, msg string, q message.Queue, err error) {
	if !logging.Enabled(c.log, level) {
		return
	}
	kv := make([]any, 0, 6)
	kv = append(kv, "group", c.names.UserGroup)
	if q.Topic != "" { // errors about several queues name them themselves
		kv = append(kv, "queue", c.names.UserQueue(q).String())
	}
	if err != nil {
		kv = append(kv, "err", err)
	}
	c.log.Log(level, msg, kv...)
}

func (c *PushConsumer) logMsg(level logging.Level, msg string, q message.Queue, m *message.Ext, err error) {
	if !logging.Enabled(c.log, level) {
		return
	}
	kv := []any{"group", c.names.UserGroup, "queue", c.names.UserQueue(q).String(), "offset", m.QueueOffset, "msgId", m.MsgID(), "reconsumeTimes", m.ReconsumeTimes}
	if err != nil {
		kv = append(kv, "err", err)
	}
	c.log.Log(level, msg, kv...)
}

func (c *PushConsumer) logPanic(q message.Queue, msgs []*message.Ext, p any, stack []byte) {
	if logging.Enabled(c.log, logging.LevelError) {
		c.log.Log(logging.LevelError, "listener panicked; the messages will be retried", "group", c.names.UserGroup,
			"queue", c.names.UserQueue(q).String(), "messages", len(msgs), "panic", fmt.Sprint(p), "stack", string(stack))
	}
}
