package fakebroker

import (
	"slices"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// Consumer and producer groups, as ConsumerManager, ConsumerGroupInfo and ProducerManager
// keep them: members are connections (channels), each with the client id its last
// heartbeat gave; a group's subscription of a topic is the one with the highest
// subVersion, and the topics are those of the last heartbeat.
//
// Notification follows DefaultConsumerIdsChangeListener: NOTIFY_CONSUMER_IDS_CHANGED goes,
// oneway, to every member of the group left after a change: a heartbeat that adds a
// member or changes the subscribed topics (to every member, the new one included), an
// UNREGISTER_CLIENT (even from a connection that was not a member), a closed connection.
// A client that expires is removed and its connection closed without notifying the
// group: 4.9.8's scan removes it from the table before the close event runs, so the
// close finds nothing to notify (ConsumerManager.scanNotActiveChannel); the others see
// it at their next rebalance.

// maxGroups bounds the consumer groups a broker keeps.
const maxGroups = 1 << 14

// maxSubscriptions bounds the topics one group subscribes to.
const maxSubscriptions = 1 << 12

type member struct {
	sc       conn
	clientID string
	language remoting.LanguageCode
	version  int32
	last     time.Time // last heartbeat
	seq      uint64    // join order
}

type subscription struct {
	data   protocol.SubscriptionData
	filter *filter
}

type consumerGroup struct {
	name        string
	consumeType protocol.ConsumeType
	model       protocol.MessageModel
	from        protocol.ConsumeFromWhere
	members     []*member // join order
	subs        map[string]*subscription
}

func (g *consumerGroup) member(sc conn) *member {
	for _, m := range g.members {
		if m.sc == sc {
			return m
		}
	}
	return nil
}

// remove drops sc's membership and reports whether it was a member.
func (g *consumerGroup) remove(sc conn) bool {
	n := len(g.members)
	g.members = slices.DeleteFunc(g.members, func(m *member) bool { return m.sc == sc })
	return len(g.members) != n
}

// clientIDs is ConsumerGroupInfo.getAllClientId, in join order.
func (g *consumerGroup) clientIDs() []string {
	out := make([]string, len(g.members))
	for i, m := range g.members {
		out[i] = m.clientID
	}
	return out
}

// registerConsumer is ConsumerManager.registerConsumer: it reports whether the members
// or the subscribed topics changed. It runs under b.mu.
func (b *Broker) registerConsumer(sc conn, req *remoting.Command, clientID string, cd *protocol.ConsumerData, now time.Time) bool {
	g := b.groups[cd.GroupName]
	if g == nil {
		g = &consumerGroup{name: cd.GroupName, subs: make(map[string]*subscription)}
		b.groups[cd.GroupName] = g
	}
	// updateChannel
	changed := false
	g.consumeType, g.model, g.from = cd.ConsumeType, cd.MessageModel, cd.ConsumeFromWhere
	m := g.member(sc)
	if m == nil {
		b.memberSeq++
		m = &member{sc: sc, seq: b.memberSeq}
		g.members = append(g.members, m)
		changed = true
	}
	m.clientID, m.language, m.version, m.last = clientID, req.Language, req.Version, now
	// updateSubscription
	for i := range cd.SubscriptionDataSet {
		sd := &cd.SubscriptionDataSet[i]
		old := g.subs[sd.Topic]
		switch {
		case old == nil:
			g.subs[sd.Topic] = &subscription{data: *sd, filter: tagFilter(sd)}
			changed = true
		case sd.SubVersion > old.data.SubVersion:
			g.subs[sd.Topic] = &subscription{data: *sd, filter: tagFilter(sd)}
		}
	}
	for topic := range g.subs {
		if !slices.ContainsFunc(cd.SubscriptionDataSet, func(sd protocol.SubscriptionData) bool { return sd.Topic == topic }) {
			delete(g.subs, topic)
			changed = true
		}
	}
	return changed
}

// unregisterConsumer is ConsumerManager.unregisterConsumer. It runs under b.mu.
func (b *Broker) unregisterConsumer(group string, sc conn) {
	g := b.groups[group]
	if g == nil {
		return
	}
	g.remove(sc)
	if len(g.members) == 0 {
		delete(b.groups, group)
	}
	b.notifyChanged(g)
}

// notifyChanged sends NOTIFY_CONSUMER_IDS_CHANGED to every member of g. It runs under
// b.mu; sending only queues the frames.
func (b *Broker) notifyChanged(g *consumerGroup) {
	for _, m := range g.members {
		hdr := protocol.NotifyConsumerIDsChangedRequest{ConsumerGroup: g.name}
		b.ep.oneway(m.sc, newRequest(protocol.RequestNotifyConsumerIDsChanged, hdr.Encode(), nil))
	}
}

// registerProducer is ProducerManager.registerProducer. It runs under b.mu.
func (b *Broker) registerProducer(sc conn, req *remoting.Command, group, clientID string, now time.Time) {
	ps := b.producers[group]
	if ps == nil {
		if len(b.producers) >= maxGroups {
			return
		}
		ps = make(map[conn]*member)
		b.producers[group] = ps
	}
	m := ps[sc]
	if m == nil {
		m = &member{sc: sc}
		ps[sc] = m
	}
	m.clientID, m.language, m.version, m.last = clientID, req.Language, req.Version, now
}

// armExpiryScan schedules the next scan for silent clients (ClientHousekeepingService,
// every 10 s, or more often for a short expiry). It runs under b.mu.
func (b *Broker) armExpiryScan() {
	every := min(10*time.Second, max(b.cfg.clientExpiry/4, time.Millisecond))
	gen := b.runGen
	b.expiryTask = b.c.sched.after(every, func() { b.scanExpired(gen) })
}

// scanExpired removes members whose last heartbeat is older than the client expiry and
// closes their connections (scanNotActiveChannel of both managers), without notifying.
func (b *Broker) scanExpired(gen uint64) {
	var closeConns []conn
	b.mu.Lock()
	if gen != b.runGen {
		b.mu.Unlock()
		return // armed by a run that ended
	}
	b.expiryTask = nil
	now := time.Now()
	expired := func(m *member) bool {
		if now.Sub(m.last) > b.cfg.clientExpiry {
			closeConns = append(closeConns, m.sc)
			return true
		}
		return false
	}
	for name, g := range b.groups {
		g.members = slices.DeleteFunc(g.members, expired)
		if len(g.members) == 0 {
			delete(b.groups, name)
		}
	}
	for name, ps := range b.producers {
		for sc, m := range ps {
			if expired(m) {
				delete(ps, sc)
			}
		}
		if len(ps) == 0 {
			delete(b.producers, name)
		}
	}
	b.armExpiryScan()
	b.mu.Unlock()
	for _, sc := range closeConns {
		sc.Close() // its close event finds nothing left to notify
	}
}
