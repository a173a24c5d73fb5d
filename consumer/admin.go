package consumer

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
)

// instanceHooks is what the client instance calls: heartbeat data, broker
// notifications and admin requests. It keeps these methods off PushConsumer's API.
type instanceHooks struct{ c *PushConsumer }

func (h instanceHooks) ConsumerData() protocol.ConsumerData {
	c := h.c
	subs := *c.subs.Load()
	data := protocol.ConsumerData{
		GroupName:        c.group,
		ConsumeType:      protocol.ConsumePassively,
		MessageModel:     protocol.MessageModel(c.cfg.model.String()),
		ConsumeFromWhere: protocol.ConsumeFromWhere(c.cfg.consumeFrom.String()),
	}
	for _, topic := range slices.Sorted(maps.Keys(subs)) {
		data.SubscriptionDataSet = append(data.SubscriptionDataSet, subs[topic])
	}
	return data
}

func (h instanceHooks) OnConsumerIDsChanged() { h.rebalanceSoon() }

func (h instanceHooks) OnRouteChanged(string) { h.rebalanceSoon() }

// rebalanceSoon asks for a pass. The consumer registers with the instance only after
// its services exist, so the rebalancer is set; a trigger before its loop starts runs
// at the loop's first turn.
func (h instanceHooks) rebalanceSoon() { h.c.rebalancer.Trigger() }

// ResetOffset applies an admin's offset reset to topic's queues.
func (h instanceHooks) ResetOffset(ctx context.Context, topic string, offsets map[message.Queue]int64) {
	h.c.rebalancer.ResetOffsets(ctx, topic, offsets)
}

// RunningInfo returns Java's ConsumerRunningInfo for admin tools.
func (h instanceHooks) RunningInfo() *protocol.ConsumerRunningInfo {
	c := h.c
	_, orderly := c.listener.(OrderlyListener)
	info := &protocol.ConsumerRunningInfo{
		Properties: map[string]string{
			protocol.PropConsumerStartTimestamp: strconv.FormatInt(c.startTime.UnixMilli(), 10),
			protocol.PropConsumeType:            string(protocol.ConsumePassively),
			protocol.PropConsumeOrderly:         strconv.FormatBool(orderly),
			protocol.PropNameServerAddr:         strings.Join(c.inst.NameServers(), ";") + ";",
			protocol.PropThreadPoolCoreSize:     strconv.Itoa(c.cfg.consumeGoroutines),
			protocol.PropClientVersion:          "V4_9_8",
			"consumerGroup":                     c.group,
			"messageModel":                      c.cfg.model.String(),
			"consumeFromWhere":                  c.cfg.consumeFrom.String(),
			"allocateMessageQueueStrategy":      c.cfg.allocateStrategy.Name(),
			"consumeThreadMin":                  strconv.Itoa(c.cfg.consumeGoroutines),
			"consumeThreadMax":                  strconv.Itoa(c.cfg.consumeGoroutines),
			"consumeConcurrentlyMaxSpan":        strconv.Itoa(c.cfg.maxSpan),
			"pullThresholdForQueue":             strconv.Itoa(c.cfg.pullThresholdForQueue),
			"pullThresholdSizeForQueue":         strconv.Itoa(c.cfg.pullThresholdSizeMiB),
			"pullThresholdForTopic":             strconv.Itoa(c.cfg.pullThresholdForTopic),
			"pullThresholdSizeForTopic":         strconv.Itoa(c.cfg.pullThresholdSizeTopic),
			"pullInterval":                      strconv.FormatInt(c.cfg.pullInterval.Milliseconds(), 10),
			"consumeMessageBatchMaxSize":        strconv.Itoa(c.cfg.consumeBatchMaxSize),
			"pullBatchSize":                     strconv.Itoa(c.cfg.pullBatchSize),
			"postSubscriptionWhenPull":          strconv.FormatBool(c.cfg.postSubscriptionWhenPull),
			"maxReconsumeTimes":                 strconv.Itoa(int(c.maxReconsumeTimes())),
			"suspendCurrentQueueTimeMillis":     strconv.FormatInt(c.cfg.suspendCurrentQueueTime.Milliseconds(), 10),
			"consumeTimeout":                    strconv.FormatInt(int64(c.cfg.consumeTimeout/time.Minute), 10),
			"instanceName":                      c.cfg.instanceName,
			"clientIP":                          strings.SplitN(c.clientID, "@", 2)[0],
		},
		MQTable:     map[message.Queue]protocol.ProcessQueueInfo{},
		StatusTable: map[string]protocol.ConsumeStatus{},
	}
	subs := *c.subs.Load()
	for _, topic := range slices.Sorted(maps.Keys(subs)) {
		info.SubscriptionSet = append(info.SubscriptionSet, subs[topic])
	}
	{
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
	}
	for topic, ts := range c.stats.snapshot(time.Now()) {
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

// ConsumeMessageDirectly runs the listener on msg for an admin tool. The listener's
// context ends with the request's (its connection closed) or at Shutdown.
func (h instanceHooks) ConsumeMessageDirectly(ctx context.Context, msg *message.Ext, brokerName string) *protocol.ConsumeMessageDirectlyResult {
	c := h.c
	if c.state.Load() != stateRunning {
		return &protocol.ConsumeMessageDirectlyResult{ConsumeResult: protocol.CRThrowException, Remark: "consumer not running"}
	}
	c.names.ResetMessage(msg)
	if logging.Enabled(c.log, logging.LevelInfo) {
		c.log.Log(logging.LevelInfo, "consuming a message directly for an admin tool", "group", c.names.UserGroup, "msgId", msg.MsgID())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.listenerCtx, cancel)()
	return c.service.consumeDirectly(ctx, msg, brokerName)
}

// ConsumerStatus returns the in-memory offsets of topic's queues.
func (h instanceHooks) ConsumerStatus(topic string) map[message.Queue]int64 {
	out := map[message.Queue]int64{}
	for q, off := range h.c.offsets.Table() {
		if q.Topic == topic {
			out[q] = off
		}
	}
	return out
}
