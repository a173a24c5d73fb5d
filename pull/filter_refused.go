package pull

import (
	"errors"
	"strings"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
)

// A broker refuses to filter a queue's pulls by the subscription's expression when it
// cannot: SUBSCRIPTION_PARSE_FAILED (an expression posted with the pull that it cannot
// parse), FILTER_DATA_NOT_EXIST (the expression of the heartbeat did not compile; also,
// for a moment, while a broker takes in the first heartbeat after a restart), or
// SYSTEM_ERROR "The broker does not support consumer to filter message by SQL92" (a
// broker without enablePropertyFilter that Start did not check, such as one added
// later). The first refusal may be the passing one: a heartbeat goes out and the queue
// is pulled again after DelayError. A second in a row refuses the queue: an ERROR
// (rate-limited) names the expression, Stats shows the broker's answer, and the broker
// is asked again only every DelayFilterRefused, so that nothing is pulled from the
// queue until it can filter. Java logs a WARN and pulls again every 3 s.

// filterRefused handles err when it is such a refusal, and reports whether it was.
func (s *Service) filterRefused(r *Request, sub protocol.SubscriptionData, err error) bool {
	var be *protocol.BrokerError
	if !errors.As(err, &be) || !isFilterRefusal(be) {
		return false
	}
	why := be.Error()
	if r.refused.Swap(&why) == nil {
		s.cfg.Broker.HeartbeatSoon()
		s.logLimited(&s.failureLog, logging.LevelWarn, "the broker refused to filter by the subscription's expression; heartbeat sent, pulling again shortly", r, err)
		s.SubmitLater(r, DelayError)
		return true
	}
	if ok, suppressed := s.filterLog.allow(); ok && logging.Enabled(s.log, logging.LevelError) {
		s.log.Log(logging.LevelError, "the broker refuses to filter this queue by the subscription's expression: nothing is pulled from it until it does (asked again every 30s)",
			"queue", r.Queue.String(), "expressionType", sub.ExpressionType, "expression", sub.SubString, "err", err,
			"suppressedSinceLast", suppressed)
	}
	s.SubmitLater(r, DelayFilterRefused)
	return true
}

func isFilterRefusal(be *protocol.BrokerError) bool {
	switch be.Code {
	case protocol.ResponseSubscriptionParseFailed, protocol.ResponseFilterDataNotExist:
		return true
	case protocol.ResponseSystemError:
		return strings.HasPrefix(be.Remark, "The broker does not support consumer to filter message by")
	}
	return false
}

// filterAccepted forgets a refusal once the broker answers a pull of the queue.
func (r *Request) filterAccepted() {
	if r.refused.Load() != nil {
		r.refused.Store(nil)
	}
}

// FilterRefused returns the broker's last refusal to filter the queue's pulls by the
// subscription's expression (see filterRefused), or "" when the broker filters them.
func (r *Request) FilterRefused() string {
	if why := r.refused.Load(); why != nil {
		return *why
	}
	return ""
}
