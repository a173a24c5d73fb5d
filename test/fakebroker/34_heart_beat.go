package fakebroker

import (
	"errors"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// HEART_BEAT (34); 4.9.8's ClientManageProcessor.heartBeat.
//
// Supported: every consumer group of the body is registered for the connection
// (groups.go: members, the subscription with the highest subVersion, the topics of the
// last heartbeat), with NOTIFY_CONSUMER_IDS_CHANGED to the whole group, sent before the
// answer, when the members or topics changed; the group's %RETRY% topic is created on the
// first heartbeat (1 queue, perm RW, the unit-mode topic flag), so it is routable from
// then on; producer groups are registered; the answer has no ext fields. The last
// heartbeat of each group is kept for inspection (LastHeartbeat).
//
// The filter data of SQL92 subscriptions is registered too (filterdata.go), whatever
// WithPropertyFilter says: a heartbeat with an expression that does not compile is
// still answered SUCCESS, and the group's pulls get FILTER_DATA_NOT_EXIST (golden
// h_sql92).
//
// With WithRocketMQ5 the answer carries IS_SUPPORT_HEART_BEAT_V2 and IS_SUB_CHANGE, as
// 5.3.3's always does.
//
// Left out: CONSUME_POP heartbeats, and the fingerprint-only heartbeat v2 (5.x).
// Beyond 16384 groups or 4096 topics per group the broker answers SYSTEM_ERROR, where a
// real broker would keep growing.
func (b *Broker) heartBeat(sc conn, req *remoting.Command) *remoting.Command {
	var hb protocol.HeartbeatData
	if err := hb.Decode(req.Body); err != nil {
		return badBody(sc, req, err)
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range hb.ConsumerDataSet {
		cd := &hb.ConsumerDataSet[i]
		if err := b.checkGroupLimits(cd); err != nil {
			return newResponse(req, protocol.ResponseSystemError, err.Error())
		}
		retry := RetryTopic(cd.GroupName)
		b.createTopicInSendMessageBack(retry, 1, permRW, topicSysFlag(false, cd.UnitMode))
		if b.registerConsumer(sc, req, hb.ClientID, cd, now) {
			b.notifyChanged(b.groups[cd.GroupName])
		}
		b.registerFilters(cd.GroupName, cd.SubscriptionDataSet)
		b.lastHB[cd.GroupName] = consumerInfo(hb.ClientID, sc, req, cd)
	}
	for _, pd := range hb.ProducerDataSet {
		b.registerProducer(sc, req, pd.GroupName, hb.ClientID, now)
	}
	resp := newResponse(req, protocol.ResponseSuccess, "")
	if b.cfg.rocketMQ5 {
		// 5.3.3 answers every heartbeat so (golden p_pop_533), producers' too.
		resp.ExtFields = (&protocol.HeartbeatResponse{SupportHeartbeatV2: true, SubChange: true}).Encode()
	}
	return resp
}

// checkGroupLimits refuses a heartbeat that would grow the broker's tables beyond their
// bounds. It runs under b.mu.
func (b *Broker) checkGroupLimits(cd *protocol.ConsumerData) error {
	if b.groups[cd.GroupName] == nil && len(b.groups) >= maxGroups {
		return errors.New("fakebroker: too many consumer groups on this broker")
	}
	if _, seen := b.lastHB[cd.GroupName]; !seen && len(b.lastHB) >= maxGroups {
		// LastHeartbeat keeps a group after its members leave: bounded too.
		return errors.New("fakebroker: too many consumer groups seen by this broker")
	}
	if len(cd.SubscriptionDataSet) > maxSubscriptions {
		return errors.New("fakebroker: too many subscriptions in one consumer group")
	}
	return nil
}
