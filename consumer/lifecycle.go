package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/pull"
	"github.com/rmqpush/rmqpush/rebalance"
	"github.com/rmqpush/rmqpush/remoting"
)

// Timing of the consumer's own periodic work.
const (
	timeoutCheckEvery = time.Second
	// removeWait bounds how long dropping a queue waits for its listener calls in flight.
	removeWait = 5 * time.Second
)

// Start connects, subscribes and starts consuming. It returns once the routes of the
// subscribed topics are known, the brokers accepted a heartbeat and the first
// rebalance ran; on error everything it started is stopped again. ctx bounds the calls
// Start makes. A Shutdown during Start makes Start stop and return ErrClosed.
func (c *PushConsumer) Start(ctx context.Context) error {
	c.mu.Lock()
	switch c.state.Load() {
	case stateNew:
	case stateShutdown:
		c.mu.Unlock()
		return ErrClosed
	default:
		c.mu.Unlock()
		return ErrStarted
	}
	if c.listener == nil {
		c.mu.Unlock()
		return errors.New("consumer: Start: no listener registered (RegisterListener)")
	}
	if len(*c.subs.Load()) == 0 {
		c.mu.Unlock()
		return errors.New("consumer: Start: no subscription (Subscribe)")
	}
	startCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.cancelStart, c.startDone = cancel, make(chan struct{})
	c.state.Store(stateStarting)
	c.mu.Unlock()

	err := c.start(startCtx)
	if c.shutdownAsked.Load() {
		err = fmt.Errorf("consumer: Start: shut down while starting: %w", ErrClosed)
	}
	if err != nil {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.apiTimeout)
		c.teardown(tctx)
		cancel()
	}
	c.mu.Lock()
	if err != nil {
		c.state.Store(stateShutdown)
	} else {
		c.ready.Store(true)
		c.state.Store(stateRunning)
	}
	close(c.startDone)
	c.mu.Unlock()
	if err == nil && logging.Enabled(c.log, logging.LevelInfo) {
		c.log.Log(logging.LevelInfo, "consumer started", "group", c.names.UserGroup, "clientID", c.clientID,
			"model", c.cfg.model.String(), "queues", len(c.rebalancer.Queues()))
	}
	return err
}

func (c *PushConsumer) start(ctx context.Context) error {
	c.startTime = time.Now()
	c.clientID = c.cfg.clientID(c.startTime)
	c.listenerCtx, c.cancelCalls = context.WithCancel(context.Background())
	c.sched = newScheduler()
	c.brokerJobs = newScheduler()

	if c.cfg.model == Clustering {
		retry, err := protocol.BuildSubscription(c.names.RetryTopic, "*")
		if err != nil {
			return err
		}
		retry.SubVersion = time.Now().UnixMilli()
		next := maps.Clone(*c.subs.Load())
		next[retry.Topic] = retry
		c.subs.Store(&next)
	}

	icfg := client.Config{
		NameServers:       c.cfg.nameServers,
		NameServerURL:     c.cfg.nameServerURL,
		Namespace:         c.names.NS,
		ClientID:          c.clientID,
		RequestTimeout:    c.cfg.apiTimeout,
		RouteInterval:     c.cfg.routeInterval,
		HeartbeatInterval: c.cfg.heartbeatInterval,
		TLS:               c.cfg.tls,
		RPCHooks:          c.cfg.rpcHooks,
		Logger:            c.log,
	}
	if c.cfg.headers == HeaderRocketMQ {
		icfg.Serialize = remoting.SerializeRocketMQ
	}
	if _, ok := c.listener.(ConcurrentlyListener); ok && c.cfg.readLoopCallAvg > 0 {
		c.idle = &idleWork{} // the service, once built, runs there (inline.go)
		icfg.IdleWork, icfg.IdleTakeover = c.idle, idleTakeover
	}
	if cr := c.cfg.credentials; cr != nil {
		icfg.Credentials = &client.Credentials{AccessKey: cr.AccessKey, SecretKey: cr.SecretKey, SecurityToken: cr.SecurityToken}
	}
	inst, err := client.New(icfg)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	c.inst = inst
	if err := inst.FetchNameServers(ctx); err != nil { // from the address service, if that is where they come from
		return fmt.Errorf("consumer: Start: %w", err)
	}
	if err := c.openOffsets(); err != nil {
		return err
	}
	if err := c.startTrace(); err != nil {
		return err
	}
	if err := c.buildServices(); err != nil {
		return err
	}
	// Registered last: from here on the instance may call instanceHooks, which use the
	// services built above.
	if err := inst.Register(c.group, instanceHooks{c}); err != nil {
		return err
	}

	// Routes of the subscribed topics first: they name the brokers to heartbeat.
	for _, topic := range c.topics() {
		if topic == c.names.RetryTopic {
			continue
		}
		if _, err := inst.UpdateTopicRoute(ctx, topic); err != nil {
			return fmt.Errorf("consumer: Start: topic %s: %w", c.names.UserTopic(topic), err)
		}
	}
	if err := inst.Start(); err != nil {
		return err
	}
	if err := c.checkSQL92Subscriptions(ctx); err != nil { // sql92.go
		return err
	}
	if n, err := inst.SendHeartbeat(ctx); n == 0 {
		return fmt.Errorf("consumer: Start: no broker accepted the heartbeat: %w", err)
	} else if err != nil {
		c.logf(logging.LevelWarn, "some brokers did not accept the heartbeat", message.Queue{}, err)
	}
	// The broker creates the retry topic on the group's first heartbeat, so its route
	// exists only now. Knowing it at once means a first retry comes back on time.
	if c.cfg.model == Clustering {
		if _, err := inst.UpdateTopicRoute(ctx, c.names.RetryTopic); err != nil {
			c.logf(logging.LevelWarn, "retry topic route not known yet; it will be fetched again", message.Queue{Topic: c.names.RetryTopic}, err)
		}
	}

	c.service.start()
	c.puller.Start()
	if c.popService != nil {
		c.popService.Start()
		c.sched.every(pull.ExtendEvery(c.cfg.popInvisibleTime), func() { c.popService.Extend(time.Now()) })
	}
	c.brokerJobs.every(c.cfg.persistInterval, c.persistAll)
	c.sched.every(timeoutCheckEvery, c.checkTimeouts)
	c.sched.every(statsEvery, func() { c.stats.sample(time.Now()) })
	c.sched.run()
	c.brokerJobs.run()

	c.rebalancer.Rebalance(ctx)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("consumer: Start: %w", err)
	}
	c.rebalancer.Start()
	return nil
}

// openOffsets creates the offset store: on the brokers for clustering, in a local file
// for broadcasting.
func (c *PushConsumer) openOffsets() error {
	if c.cfg.model == Clustering {
		store := offset.NewRemoteStore(c.group, c.inst)
		if c.cfg.commitInterval > 0 {
			store.SetCommitHook(c.armCommit)
		}
		c.offsets = store
		return nil
	}
	dir := c.cfg.offsetStoreDir
	if dir == "" {
		var err error
		if dir, err = offset.DefaultLocalDir(); err != nil {
			return fmt.Errorf("consumer: Start: no WithOffsetStoreDir, and the default directory: %w", err)
		}
	}
	store, err := offset.NewLocalStore(dir, c.clientID, c.group)
	if err != nil {
		return fmt.Errorf("consumer: Start: WithOffsetStoreDir(%q): %w", dir, err)
	}
	if err := store.Load(); err != nil {
		return fmt.Errorf("consumer: Start: %w", err)
	}
	c.offsets = store
	return nil
}

// buildServices creates the consume service, the pull service and the rebalancer.
func (c *PushConsumer) buildServices() error {
	switch l := c.listener.(type) {
	case ConcurrentlyListener:
		svc := newConcurrentService(c, l)
		if c.idle != nil {
			c.idle.svc.Store(svc)
		}
		c.service = svc
	case OrderlyListener:
		c.service = newOrderlyService(c, l)
	}
	clustering := c.cfg.model == Clustering
	orderly := orderlyListener(c.listener) // as the switch above decided
	var err error
	c.puller, err = pull.New(pull.Config{
		Group:            c.group,
		Namespace:        string(c.names.NS),
		Filter:           c.filter(),
		Broker:           c.inst,
		Dispatcher:       c.service,
		Subs:             subscriptions{c},
		Offsets:          c.offsets,
		Decoder:          &message.Decoder{},
		Logger:           c.log,
		Limits:           c.limits,
		BatchSize:        int32(c.cfg.pullBatchSize),
		Interval:         c.cfg.pullInterval,
		SuspendTimeout:   c.cfg.pullSuspend,
		CallTimeout:      c.cfg.pullTimeout,
		PostSubscription: c.cfg.postSubscriptionWhenPull,
		Orderly:          orderly,
		Clustering:       clustering,
		LendBodies:       c.cfg.lentBodies,
		Paused:           c.paused.Load,
		OnOffsetIllegal:  func(r *pull.Request, next int64) { c.rebalancer.OffsetIllegal(r, next) },
		OnPulled:         c.pulled,
	})
	if err != nil {
		return err
	}
	// Server-side rebalancing (and with it POP) for concurrent clustering consumers
	// only, as Java's RebalancePushImpl.clientRebalance decides.
	var assigner rebalance.Assigner
	var popPuller rebalance.PopPuller
	if cs, ok := c.service.(*concurrentService); ok && clustering && !c.cfg.clientRebalance {
		if err := c.buildPopService(cs); err != nil { // pop.go
			return err
		}
		assigner, popPuller = c.inst, c.popService
	}
	start := rebalance.StartFromLast
	switch c.cfg.consumeFrom {
	case ConsumeFromFirstOffset:
		start = rebalance.StartFromFirst
	case ConsumeFromTimestamp:
		start = rebalance.StartFromTimestamp
	}
	ts := c.cfg.consumeTimestamp
	if ts.IsZero() {
		ts = c.startTime.Add(-30 * time.Minute)
	}
	c.rebalancer, err = rebalance.New(rebalance.Config{
		Group:         c.group,
		Clustering:    clustering,
		Strategy:      c.cfg.allocateStrategy,
		Broker:        c.inst,
		Offsets:       c.offsets,
		Puller:        c.puller,
		Logger:        c.log,
		TakeoverGrace: c.cfg.takeoverGrace,
		// A member that has not yet seen a route change learns it at its next route
		// poll; a queue gained meanwhile waits that long at most for its offset to settle.
		TakeoverMaxWait: c.cfg.routeInterval + 2*c.cfg.takeoverGrace,
		StartFrom:       start,
		StartTimestamp:  ts,
		Interval:        c.cfg.rebalanceInterval,
		Topics:          c.topics,
		Paused:          c.paused.Load,
		PersistTimeout:  c.cfg.apiTimeout,
		BeforeAdd:       c.service.beforeAdd,
		CancelAdd:       c.service.cancelAdd,
		BeforeRemove:    c.service.beforeRemove,
		AfterRemove:     c.service.afterRemove,
		Changed:         c.assignmentChanged,
		Assigner:        assigner,
		PopPuller:       popPuller,
		PopInitMode:     c.popInitMode(),
		PopsInFlight:    c.cfg.popsInFlight,
		PopRetryTopic:   c.consumePopRetryTopic,
	})
	return err
}

// subscriptions adapts the consumer to pull.Subscriptions.
type subscriptions struct{ c *PushConsumer }

func (s subscriptions) Subscription(topic string) (protocol.SubscriptionData, bool) {
	return s.c.subscription(topic)
}

// limits returns a queue's flow-control limits: the per-queue options, or the per-topic
// ones divided among the topic's assigned queues.
func (c *PushConsumer) limits(q message.Queue) pull.Limits {
	lim := pull.Limits{Count: int64(c.cfg.pullThresholdForQueue), SizeMiB: int64(c.cfg.pullThresholdSizeMiB), MaxSpan: int64(c.cfg.maxSpan)}
	if c.cfg.pullThresholdForTopic > 0 || c.cfg.pullThresholdSizeTopic > 0 {
		if n := int64(c.topicQueues(q.Topic)); n > 0 {
			if c.cfg.pullThresholdForTopic > 0 {
				lim.Count = max(1, int64(c.cfg.pullThresholdForTopic)/n)
			}
			if c.cfg.pullThresholdSizeTopic > 0 {
				lim.SizeMiB = max(1, int64(c.cfg.pullThresholdSizeTopic)/n)
			}
		}
	}
	return lim
}

// topicQueues returns how many of topic's queues are assigned; kept by assignmentChanged.
func (c *PushConsumer) topicQueues(topic string) int {
	m := c.assigned.Load()
	if m == nil {
		return 0
	}
	return (*m)[topic]
}

// assignmentChanged is the rebalancer's Changed hook (Java's messageQueueChanged):
// recount the queues per topic for the per-topic limits, heartbeat at once, and tell
// the MessageQueueListener.
func (c *PushConsumer) assignmentChanged(topic string, all, mine []message.Queue) {
	for {
		old := c.assigned.Load()
		next := map[string]int{}
		if old != nil {
			next = maps.Clone(*old)
		}
		next[topic] = len(mine)
		if c.assigned.CompareAndSwap(old, &next) {
			break
		}
	}
	c.inst.HeartbeatSoon()
	c.queuesChanged(topic, all, mine)
}

// persistAll writes the changed offsets of the assigned queues (every persist interval).
func (c *PushConsumer) persistAll() {
	// Shutdown ends it (and then persists every offset itself).
	ctx, cancel := context.WithTimeout(c.listenerCtx, c.cfg.persistInterval)
	defer cancel()
	if err := c.offsets.PersistAll(ctx, c.rebalancer.Queues()); err != nil {
		c.logf(logging.LevelWarn, "persisting offsets failed; they will be written at the next round", message.Queue{}, err)
	}
}

// armCommit is the remote store's commit hook: an offset moved away from the one its
// broker holds (a listener call, a pull that found nothing to consume, a reset), or a
// write that ended left it ahead. It arranges for the offsets to reach the broker within
// the commit interval (WithCommitInterval). The commit is a one-shot timer armed by the
// first request after the previous commit began, so at most one is pending, and an idle
// consumer has none.
func (c *PushConsumer) armCommit() {
	if c.commitArmed.CompareAndSwap(false, true) {
		c.brokerJobs.after(c.cfg.commitInterval, c.commitChanged)
	}
}

// commitChanged writes the offsets that moved since they were last written; see
// armCommit. A queue it skips (a write of its offset in flight) asks again when that
// write ends.
func (c *PushConsumer) commitChanged() {
	c.commitArmed.Store(false) // changes from now on arm the next commit
	// Shutdown ends it (and then persists every offset itself).
	ctx, cancel := context.WithTimeout(c.listenerCtx, c.cfg.apiTimeout)
	defer cancel()
	if err := c.offsets.Flush(ctx); err != nil {
		c.logf(logging.LevelDebug, "committing offsets failed; they are written at the next round", message.Queue{}, err)
	}
}

// checkTimeouts sends back the messages past the consume timeout.
func (c *PushConsumer) checkTimeouts() {
	now := time.Now()
	for _, r := range c.rebalancer.Requests() {
		if !r.PQ.Dropped() {
			c.service.expire(r, now)
		}
	}
}

// Shutdown stops consuming and leaves the group cleanly: it stops pulling and
// rebalancing, lets the listener calls in flight finish (waiting at most until ctx
// ends; then listeners' contexts are cancelled), persists every offset, tells the
// brokers the consumer left (UNREGISTER_CLIENT, so the rest of the group takes its
// queues over at once) and closes the connections. Offsets are persisted and the
// consumer unregistered even when ctx has ended, each within the request timeout: an
// offset not persisted means messages consumed twice. Cached messages not yet given to
// the listener are not consumed; their offsets are not committed, so the queue's next
// owner consumes them. A listener call that ignores its context may still be running
// when Shutdown returns; its result is then ignored. Never call Shutdown from a
// listener or hook itself, but start it on a goroutine of its own there: from a listener
// or a consume hook it waits for that very call until ctx ends (with a context that
// never ends, forever), and from a pull hook, or a listener call an operator's
// CONSUME_MESSAGE_DIRECTLY made, it never returns (closing the connections waits for
// the goroutine it runs on). It returns the first error met; calling it again returns
// nil.
func (c *PushConsumer) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	switch c.state.Load() {
	case stateNew:
		c.state.Store(stateShutdown)
		c.mu.Unlock()
		return nil
	case stateShutdown:
		c.mu.Unlock()
		return nil
	case stateStarting:
		c.shutdownAsked.Store(true)
		cancel, done := c.cancelStart, c.startDone
		c.mu.Unlock()
		cancel()
		<-done // Start tears down what it started
		return nil
	}
	c.state.Store(stateShutdown)
	c.mu.Unlock()
	return c.teardown(ctx)
}

// teardown undoes whatever start did, in order.
func (c *PushConsumer) teardown(ctx context.Context) error {
	var errs []error
	if c.rebalancer != nil {
		c.rebalancer.Stop()
	}
	if c.puller != nil {
		c.puller.Stop()
	}
	if c.popService != nil {
		c.popService.Stop() // no new pops; what is popped is still consumed and acked
	}
	if c.service != nil {
		if err := c.service.stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if c.popService != nil {
		if err := c.flushPops(ctx); err != nil {
			errs = append(errs, fmt.Errorf("consumer: acks of popped messages still in flight at shutdown: %w", err))
		}
	}
	if c.cancelCalls != nil {
		c.cancelCalls() // listeners still running (and admin calls) see their context end
	}
	if c.tracer != nil && c.tracer.d != nil {
		tctx, cancel := context.WithTimeout(ctx, c.cfg.apiTimeout)
		c.tracer.d.Close(tctx) // sends what the listeners traced, while the connections are up
		cancel()
	}
	if c.sched != nil {
		c.sched.close()
	}
	if c.brokerJobs != nil {
		c.brokerJobs.close()
	}
	if c.lockJobs != nil {
		c.lockJobs.close()
	}
	if c.rebalancer != nil {
		c.rebalancer.DropAll(ctx) // persists every offset, ctx or not
	}
	if c.inst != nil {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.apiTimeout)
		if err := c.inst.Unregister(uctx, c.group); err != nil && !errors.Is(err, client.ErrClosed) {
			errs = append(errs, err)
		}
		cancel()
		c.inst.Shutdown()
	}
	if c.puller != nil {
		c.puller.Wait()
	}
	if c.popService != nil {
		c.popService.Wait()
	}
	if logging.Enabled(c.log, logging.LevelInfo) {
		c.log.Log(logging.LevelInfo, "consumer shut down", "group", c.names.UserGroup, "clientID", c.clientID)
	}
	for _, h := range c.hooks.shutdown {
		h.OnConsumerShutdown(c)
	}
	return errors.Join(errs...)
}
