package consumer

import (
	"slices"
	"time"

	"github.com/rmqpush/rmqpush/rebalance"
)

// The options of RocketMQ 5's server-side rebalancing and POP consumption (pop.go).

// WithClientRebalance sets who divides a topic's queues among the group's members. true
// (the default, as Java's clientRebalance): each member computes its own with the
// allocation strategy. false: each member asks a broker (QUERY_ASSIGNMENT, RocketMQ 5),
// which also says how to consume each queue: by pulling, as with true, or by POP, if
// the operator set the group's consume mode on the topic to POP (mqadmin setConsumeMode
// -g <group> -t <topic> -m POP -q <popShareQueueNum>). Orderly and broadcasting
// consumers always rebalance themselves, as in Java. The brokers know two strategies,
// Averagely and AveragelyByCircle; NewPushConsumer refuses another with false. A
// broker without QUERY_ASSIGNMENT (4.x) makes the consumer rebalance itself.
func WithClientRebalance(on bool) Option { return func(c *cfg) { c.clientRebalance = on } }

// WithPopInvisibleTime sets how long a popped message stays invisible to other pops
// while this consumer has it (Java's popInvisibleTime). A message still waiting for,
// or in, its listener call when this is about to end gets it again (until
// WithConsumeTimeout after its pop), so a slow listener does not see it delivered to
// another member. Default 60s; range [1s, 300s] (Java: 5s to 300s).
func WithPopInvisibleTime(d time.Duration) Option { return func(c *cfg) { c.popInvisibleTime = d } }

// WithPopBatchSize sets how many messages one pop asks for (Java's popBatchNums).
// Default 32, range [1, 32].
func WithPopBatchSize(n int) Option { return func(c *cfg) { c.popBatchSize = n } }

// WithPopsInFlight sets how many pops this consumer keeps in flight at once for each
// broker whose queues it pops whole (queue id -1, the assignment of every member with
// popShareQueueNum 0): a broker pops each queue for one pop at a time, so pops in
// parallel read different queues, and the consumer is not held to one round trip per
// batch of 32 messages. Default 4, range [1, 16]; 1 behaves as Java. A member given a
// single queue pops it one pop at a time.
func WithPopsInFlight(n int) Option { return func(c *cfg) { c.popsInFlight = n } }

// WithPopThresholdForQueue sets how many popped messages of one POP queue may wait for
// their result before its pops wait (Java's popThresholdForQueue). Default 96, range
// [1, 65535]. WithPullThresholdSizeForQueue bounds their size as well.
func WithPopThresholdForQueue(n int) Option { return func(c *cfg) { c.popThresholdForQueue = n } }

// WithPopDelayLevels sets how long a popped message whose listener call failed stays
// invisible before it comes back, by its reconsume times: the first delay for a first
// failure, and so on, the last for every failure beyond. Default Java's popDelayLevel:
// 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h. Tests shorten them: 1 to 64
// delays of at least 10ms.
func WithPopDelayLevels(levels ...time.Duration) Option {
	return func(c *cfg) { c.popDelayLevels = slices.Clone(levels) }
}

// WithLongPollTime sets how long a broker may hold a pull or a pop that finds nothing
// before answering (Java's BROKER_SUSPEND_MAX_TIME_MILLIS). Default 15s, range
// [100ms, 60s]. A shorter one makes idle consumers send more requests; tests use it so
// a message revived for POP, which does not wake a held pop, comes sooner.
func WithLongPollTime(d time.Duration) Option { return func(c *cfg) { c.pullSuspend = d } }

// validatePop checks the options of this file.
func (c *cfg) validatePop() error {
	if c.popInvisibleTime < time.Second || c.popInvisibleTime > 300*time.Second {
		return optionError("WithPopInvisibleTime", "%v is out of range [1s, 300s]", c.popInvisibleTime)
	}
	if c.popBatchSize < 1 || c.popBatchSize > 32 {
		return optionError("WithPopBatchSize", "%d is out of range [1, 32]", c.popBatchSize)
	}
	if c.popsInFlight < 1 || c.popsInFlight > 16 {
		return optionError("WithPopsInFlight", "%d is out of range [1, 16]", c.popsInFlight)
	}
	if c.popThresholdForQueue < 1 || c.popThresholdForQueue > 65535 {
		return optionError("WithPopThresholdForQueue", "%d is out of range [1, 65535]", c.popThresholdForQueue)
	}
	if len(c.popDelayLevels) == 0 || len(c.popDelayLevels) > 64 {
		return optionError("WithPopDelayLevels", "%d delays; give 1 to 64", len(c.popDelayLevels))
	}
	for i, d := range c.popDelayLevels {
		if d < 10*time.Millisecond {
			return optionError("WithPopDelayLevels", "delay %d is %v, shorter than 10ms", i+1, d)
		}
	}
	if c.pullSuspend < 100*time.Millisecond || c.pullSuspend > time.Minute {
		return optionError("WithLongPollTime", "%v is out of range [100ms, 60s]", c.pullSuspend)
	}
	c.pullTimeout = max(30*time.Second, c.pullSuspend+15*time.Second)
	if !c.clientRebalance {
		if name := c.allocateStrategy.Name(); name != rebalance.NameAveragely && name != rebalance.NameAveragelyByCircle {
			return optionError("WithClientRebalance", "the brokers allocate queues with AVG or AVG_BY_CIRCLE only, not %s (WithAllocateStrategy)", name)
		}
	}
	return nil
}
