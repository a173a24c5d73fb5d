package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/test/fakebroker/internal/sql92"
)

// filter is a pull's subscription compiled for the store: 4.9.8's
// ExpressionMessageFilter without bloom filter bit maps (enableCalcFilterBitMap is off
// by default).
type filter struct {
	all   bool        // everything matches: "*", class filter mode, or SQL92 without filter data
	codes []int32     // TAG: the subscribed tags' hash codes
	expr  *sql92.Expr // SQL92: evaluated on each message's properties
}

// isTagType is ExpressionType.isTagType: no type, or TAG.
func isTagType(t string) bool { return t == "" || t == protocol.ExpressionTypeTag }

// tagFilter filters by a TAG subscription's hash codes.
func tagFilter(sd *protocol.SubscriptionData) *filter {
	if sd.ClassFilterMode || sd.SubString == protocol.SubAll {
		return &filter{all: true}
	}
	return &filter{codes: sd.CodeSet}
}

// expressionFilter filters by a non-TAG subscription's filter data; without any (an
// expression posted with the pull that did not compile) 4.9.8 lets every message
// through.
func expressionFilter(fd *filterData) *filter {
	if fd == nil {
		return &filter{all: true}
	}
	return &filter{expr: fd.expr}
}

// matches is isMatchedByConsumeQueue: a message's tags hash code against the
// subscription (SQL92 waits for the message itself).
func (f *filter) matches(tags int32) bool {
	if f.all || f.expr != nil {
		return true
	}
	for _, c := range f.codes {
		if c == tags {
			return true
		}
	}
	return false
}

// matchesRecord is isMatchedByCommitLog: an SQL92 expression on the properties of a
// stored record (user and system properties alike, as stored).
func (f *filter) matchesRecord(rec []byte) bool {
	if f.expr == nil {
		return true
	}
	r, ok := parseRecord(rec)
	return ok && f.expr.Matches(parseJProps(r.props).get)
}

// matchesArrival is what the hold service asks of a new message for a held pull: its
// tags hash code, and for SQL92 its properties.
func (f *filter) matchesArrival(tags int32, props *jprops) bool {
	if f.expr != nil {
		return props != nil && f.expr.Matches(props.get)
	}
	return f.matches(tags)
}

// pullFilter resolves the filter of a pull as 4.9.8's PullMessageProcessor does, or
// returns the code and remark of its refusal: the expression posted with the pull
// (subscription flag; an SQL92 one that does not compile filters nothing), else the
// group's subscription from its heartbeats (SUBSCRIPTION_NOT_EXIST without group or
// topic, SUBSCRIPTION_NOT_LATEST when the pull's subVersion is newer) and, for SQL92,
// the filter data registered with it (FILTER_DATA_NOT_EXIST when its expression did not
// compile, FILTER_DATA_NOT_LATEST when older than the pull); then SYSTEM_ERROR for a
// non-TAG subscription on a broker without enablePropertyFilter. It runs under b.mu.
func (b *Broker) pullFilter(h *protocol.PullMessageRequest, hasSub bool) (*filter, int32, string) {
	var f *filter
	expressionType := h.ExpressionType
	if hasSub {
		if isTagType(h.ExpressionType) {
			sd, err := protocol.BuildSubscription(h.Topic, h.Subscription)
			if err != nil {
				return nil, protocol.ResponseSubscriptionParseFailed, remarkSubParseFailed
			}
			f = tagFilter(&sd)
		} else {
			if h.Subscription == "" { // FilterAPI.build: "Expression can't be null!"
				return nil, protocol.ResponseSubscriptionParseFailed, remarkSubParseFailed
			}
			f = expressionFilter(buildFilterData(h.Subscription, h.ExpressionType, h.SubVersion))
		}
	} else {
		g := b.groups[h.ConsumerGroup]
		if g == nil {
			return nil, protocol.ResponseSubscriptionNotExist, remarkGroupInfoNotExist
		}
		sub := g.subs[h.Topic]
		if sub == nil {
			return nil, protocol.ResponseSubscriptionNotExist, remarkSubNotExist
		}
		if sub.data.SubVersion < h.SubVersion {
			return nil, protocol.ResponseSubscriptionNotLatest, remarkSubNotLatest
		}
		expressionType = sub.data.ExpressionType
		if isTagType(expressionType) {
			f = sub.filter
		} else {
			fd := b.filterDataOf(h.Topic, h.ConsumerGroup)
			if fd == nil {
				return nil, protocol.ResponseFilterDataNotExist, remarkFilterDataNotExist
			}
			if fd.clientVersion < h.SubVersion {
				return nil, protocol.ResponseFilterDataNotLatest, remarkFilterDataNotLatest
			}
			f = expressionFilter(fd)
		}
	}
	if !isTagType(expressionType) && !b.cfg.propertyFilter {
		return nil, protocol.ResponseSystemError, remarkNoPropertyFilter + expressionType
	}
	return f, 0, ""
}
