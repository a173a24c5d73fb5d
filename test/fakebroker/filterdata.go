package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/test/fakebroker/internal/sql92"
)

// Filter data, as 4.9.8's ConsumerFilterManager keeps it: for each topic and group with
// a non-TAG subscription, the compiled expression and the subscription version it came
// with. Heartbeats register it (whatever enablePropertyFilter says) and pulls of such a
// subscription filter by it.
//
// Registration follows FilterDataMapByTopic.register: a new entry only when its
// expression compiles; an entry is replaced only by a newer version with a different
// expression (a newer version of the same expression only takes the version), and a
// newer one that does not compile removes it, so the group's pulls get
// FILTER_DATA_NOT_EXIST. Entries outlive their group, as 4.9.8 keeps them for 24 h
// after the group leaves and across restarts (consumerFilter.json); here they are
// kept for the life of the broker.
//
// Left out: bloom filter bit maps (enableCalcFilterBitMap, off by default), the dead
// time of entries (which changes nothing a pull sees), the window a real broker leaves
// between updating a group's subscription and registering its filter data, in which a
// racing pull gets FILTER_DATA_NOT_EXIST (golden h_sql92, the peer's first pulls).
// Beyond maxFilterData entries new ones are not registered.

// maxFilterData bounds the filter data entries a broker keeps.
const maxFilterData = 1 << 16

type filterData struct {
	expression    string
	typ           string
	clientVersion int64
	expr          *sql92.Expr
}

// buildFilterData is ConsumerFilterManager.build: the compiled expression, or nil when
// it does not compile (or its type is not one the broker knows).
func buildFilterData(expression, typ string, clientVersion int64) *filterData {
	if typ != protocol.ExpressionTypeSQL92 {
		return nil
	}
	expr, err := sql92.Compile(expression)
	if err != nil {
		return nil
	}
	return &filterData{expression: expression, typ: typ, clientVersion: clientVersion, expr: expr}
}

// registerFilters registers the filter data of a heartbeat's subscriptions of group. It
// runs under b.mu.
func (b *Broker) registerFilters(group string, subs []protocol.SubscriptionData) {
	for i := range subs {
		sd := &subs[i]
		if isTagType(sd.ExpressionType) || sd.SubString == "" {
			continue
		}
		byGroup := b.filters[sd.Topic]
		old := byGroup[group]
		switch {
		case old == nil:
			fd := buildFilterData(sd.SubString, sd.ExpressionType, sd.SubVersion)
			if fd == nil || b.filterCount >= maxFilterData {
				continue
			}
			if byGroup == nil {
				byGroup = make(map[string]*filterData)
				b.filters[sd.Topic] = byGroup
			}
			byGroup[group] = fd
			b.filterCount++
		case sd.SubVersion <= old.clientVersion:
			// An older (or the same) version changes nothing.
		case sd.SubString != old.expression || sd.ExpressionType != old.typ:
			if fd := buildFilterData(sd.SubString, sd.ExpressionType, sd.SubVersion); fd != nil {
				byGroup[group] = fd
			} else {
				delete(byGroup, group)
				b.filterCount--
			}
		default:
			old.clientVersion = sd.SubVersion
		}
	}
}

// filterDataOf returns group's filter data for topic, or nil. It runs under b.mu.
func (b *Broker) filterDataOf(topic, group string) *filterData {
	return b.filters[topic][group]
}
