package consumer

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
)

// RunningInfo returns Java's ConsumerRunningInfo for admin tools (mqadmin
// consumerStatus): the properties Java 4.9.8 reports, the subscriptions, every assigned
// queue's state (those consumed by POP in mqPopTable, as Java 5 reports them) and a
// status line per subscribed topic, all under the names on the wire. The client instance adds the goroutine dump when the admin asks for Java's
// jstack.
func (h instanceHooks) RunningInfo() *protocol.ConsumerRunningInfo {
	c := h.c
	info := &protocol.ConsumerRunningInfo{
		Properties:  c.runningProperties(),
		MQTable:     map[message.Queue]protocol.ProcessQueueInfo{},
		StatusTable: map[string]protocol.ConsumeStatus{},
	}
	subs := *c.subs.Load()
	for _, topic := range slices.Sorted(maps.Keys(subs)) {
		info.SubscriptionSet = append(info.SubscriptionSet, subs[topic])
		info.StatusTable[topic] = protocol.ConsumeStatus{} // every subscribed topic has a line, as in Java
	}
	committed := c.offsets.Table()
	for q, pq := range c.rebalancer.ProcessQueues() {
		s := pq.Snapshot()
		info.MQTable[q] = protocol.ProcessQueueInfo{
			CommitOffset:            committed[q],
			CachedMsgMinOffset:      s.CachedMsgMinOffset,
			CachedMsgMaxOffset:      s.CachedMsgMaxOffset,
			CachedMsgCount:          s.CachedMsgCount,
			CachedMsgSizeInMiB:      s.CachedMsgSizeInMiB,
			TransactionMsgMinOffset: s.TransactionMsgMinOffset,
			TransactionMsgMaxOffset: s.TransactionMsgMaxOffset,
			TransactionMsgCount:     s.TransactionMsgCount,
			Locked:                  s.Locked,
			TryUnlockTimes:          s.TryUnlockTimes,
			LastLockTimestamp:       s.LastLockTimestamp,
			Dropped:                 s.Dropped,
			LastPullTimestamp:       s.LastPullTimestamp,
			LastConsumeTimestamp:    s.LastConsumeTimestamp,
		}
	}
	for _, r := range c.rebalancer.PopRequests() {
		if info.MQPopTable == nil {
			info.MQPopTable = map[message.Queue]protocol.PopProcessQueueInfo{}
		}
		info.MQPopTable[r.Queue] = protocol.PopProcessQueueInfo{WaitAckCount: int32(r.PQ.Count()), Dropped: r.PQ.Dropped(),
			LastPopTimestamp: r.PQ.LastPopTime().UnixMilli()}
	}
	for topic, ts := range c.stats.snapshot(time.Now()) {
		if _, subscribed := subs[topic]; !subscribed {
			continue // Java reports the subscribed topics only
		}
		info.StatusTable[topic] = protocol.ConsumeStatus{
			PullRT:            float64(ts.PullRT) / float64(time.Millisecond),
			PullTPS:           ts.PullTPS,
			ConsumeRT:         float64(ts.ConsumeRT) / float64(time.Millisecond),
			ConsumeOKTPS:      ts.ConsumeOKTPS,
			ConsumeFailedTPS:  ts.ConsumeFailedTPS,
			ConsumeFailedMsgs: ts.ConsumeFailedMsgs,
		}
	}
	return info
}

// runningProperties are the properties of the running info: those Java 4.9.8 reports
// (every field of its DefaultMQPushConsumer, MixAll.object2Properties, and the PROP_
// entries its MQClientInstance adds), under Java's names, with the values of this
// consumer. Where Java prints an object (listener, strategy, offset store, logger) the
// value names the Go one. instanceName and clientIP are rmqpush's own additions.
func (c *PushConsumer) runningProperties() map[string]string {
	orderly := orderlyListener(c.listener)
	ts := c.cfg.consumeTimestamp
	if ts.IsZero() {
		ts = c.startTime.Add(-30 * time.Minute)
	}
	offsetStore := "RemoteBrokerOffsetStore"
	if c.cfg.model == Broadcasting {
		offsetStore = "LocalFileOffsetStore"
	}
	props := map[string]string{
		protocol.PropConsumerStartTimestamp:  strconv.FormatInt(c.startTime.UnixMilli(), 10),
		protocol.PropConsumeType:             string(protocol.ConsumePassively),
		protocol.PropConsumeOrderly:          strconv.FormatBool(orderly),
		protocol.PropNameServerAddr:          strings.Join(c.inst.NameServers(), ";") + ";",
		protocol.PropThreadPoolCoreSize:      strconv.Itoa(c.cfg.consumeGoroutines),
		protocol.PropClientVersion:           "V4_9_8",
		"consumerGroup":                      c.group,
		"messageModel":                       c.cfg.model.String(),
		"consumeFromWhere":                   c.cfg.consumeFrom.String(),
		"consumeTimestamp":                   ts.Format("20060102150405"), // Java's yyyyMMddHHmmss
		"allocateMessageQueueStrategy":       c.cfg.allocateStrategy.Name(),
		"subscription":                       c.subscriptionProperty(),
		"messageListener":                    fmt.Sprintf("%T", c.listener),
		"offsetStore":                        offsetStore,
		"log":                                fmt.Sprintf("%T", c.log),
		"defaultMQPushConsumerImpl":          "rmqpush " + c.clientID,
		"consumeThreadMin":                   strconv.Itoa(c.cfg.consumeGoroutines),
		"consumeThreadMax":                   strconv.Itoa(c.cfg.consumeGoroutines),
		"adjustThreadPoolNumsThreshold":      "100000", // Java's default; rmqpush's pool is fixed
		"consumeConcurrentlyMaxSpan":         strconv.Itoa(c.cfg.maxSpan),
		"pullThresholdForQueue":              strconv.Itoa(c.cfg.pullThresholdForQueue),
		"pullThresholdSizeForQueue":          strconv.Itoa(c.cfg.pullThresholdSizeMiB),
		"pullThresholdForTopic":              strconv.Itoa(c.cfg.pullThresholdForTopic),
		"pullThresholdSizeForTopic":          strconv.Itoa(c.cfg.pullThresholdSizeTopic),
		"pullInterval":                       strconv.FormatInt(c.cfg.pullInterval.Milliseconds(), 10),
		"consumeMessageBatchMaxSize":         strconv.Itoa(c.cfg.consumeBatchMaxSize),
		"pullBatchSize":                      strconv.Itoa(c.cfg.pullBatchSize),
		"postSubscriptionWhenPull":           strconv.FormatBool(c.cfg.postSubscriptionWhenPull),
		"unitMode":                           "false",
		"maxReconsumeTimes":                  strconv.Itoa(c.cfg.maxReconsumeTimes), // as set: -1 means the default, as in Java
		"suspendCurrentQueueTimeMillis":      strconv.FormatInt(c.cfg.suspendCurrentQueueTime.Milliseconds(), 10),
		"consumeTimeout":                     strconv.FormatInt(int64(c.cfg.consumeTimeout/time.Minute), 10),
		"awaitTerminationMillisWhenShutdown": "0", // Shutdown's ctx bounds the wait instead
		"instanceName":                       c.cfg.instanceName,
		// Java 5's fields of POP consumption.
		"clientRebalance":      strconv.FormatBool(c.cfg.clientRebalance),
		"popInvisibleTime":     strconv.FormatInt(c.cfg.popInvisibleTime.Milliseconds(), 10),
		"popBatchNums":         strconv.Itoa(c.cfg.popBatchSize),
		"popThresholdForQueue": strconv.Itoa(c.cfg.popThresholdForQueue),
		"popsInFlight":         strconv.Itoa(c.cfg.popsInFlight), // rmqpush's own
		"clientIP":             strings.SplitN(c.clientID, "@", 2)[0],
	}
	if c.tracer != nil {
		props["traceDispatcher"] = "rmqpush message trace"
	}
	return props
}

// subscriptionProperty is Java's subscription field as its Map.toString prints it:
// {topic=expression, ...}, the topics on the wire (Java's setSubscription wraps them).
func (c *PushConsumer) subscriptionProperty() string {
	subs := *c.subs.Load()
	var parts []string
	for _, topic := range slices.Sorted(maps.Keys(subs)) {
		if topic == c.names.RetryTopic {
			continue // Java's map holds the user's subscriptions only
		}
		parts = append(parts, topic+"="+subs[topic].SubString)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
