package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
	"github.com/rmqpush/rmqpush/test/fakebroker/internal/sql92"
)

// CHECK_CLIENT_CONFIG (46); 4.9.8's ClientManageProcessor.checkClientConfig, which
// Java's consumer sends at start for each subscription that is not by tag.
//
// Supported: the body {clientId, group, subscriptionData}; SUCCESS for a TAG
// subscription (or none); without WithPropertyFilter, SYSTEM_ERROR "The broker does not
// support consumer to filter message by <type>"; an SQL92 expression that does not
// compile, SUBSCRIPTION_PARSE_FAILED with the parser's exception as the remark (the
// sql92 package words it as 4.9.8 does); an unknown expression type,
// SUBSCRIPTION_PARSE_FAILED with the NullPointerException a 4.9.8 broker on JDK 17
// meets; otherwise SUCCESS. Answers carry no ext fields (golden h0_sql92_no_filter,
// h_sql92). Nothing is registered: heartbeats do that.
//
// Left out: an absent subString, which 4.9.8 answers with a remark-less
// SUBSCRIPTION_PARSE_FAILED, is read as an empty one here.
func (b *Broker) checkClientConfig(sc conn, req *remoting.Command) *remoting.Command {
	var body protocol.CheckClientConfigBody
	if err := body.Decode(req.Body); err != nil {
		return badBody(sc, req, err)
	}
	sd := body.SubscriptionData
	if isTagType(sd.ExpressionType) {
		return newResponse(req, protocol.ResponseSuccess, "")
	}
	if !b.cfg.propertyFilter {
		return newResponse(req, protocol.ResponseSystemError, remarkNoPropertyFilter+sd.ExpressionType)
	}
	if sd.ExpressionType != protocol.ExpressionTypeSQL92 {
		return newResponse(req, protocol.ResponseSubscriptionParseFailed, remarkUnknownFilterType)
	}
	if _, err := sql92.Compile(sd.SubString); err != nil {
		return newResponse(req, protocol.ResponseSubscriptionParseFailed, err.(*sql92.Error).Remark)
	}
	return newResponse(req, protocol.ResponseSuccess, "")
}

// remarkUnknownFilterType is the message of the NullPointerException 4.9.8 (on JDK 17,
// with helpful messages) meets compiling an expression of a type it has no filter for.
const remarkUnknownFilterType = `Cannot invoke "org.apache.rocketmq.filter.FilterSpi.compile(String)" because ` +
	`the return value of "org.apache.rocketmq.filter.FilterFactory.get(String)" is null`
