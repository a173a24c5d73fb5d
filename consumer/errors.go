package consumer

import (
	"errors"
	"strconv"
	"strings"
)

// Errors a caller may act on.
var (
	// ErrClosed is returned by calls after Shutdown.
	ErrClosed = errors.New("consumer: shut down")
	// ErrStarted is returned by calls that must come before Start.
	ErrStarted = errors.New("consumer: already started")
	// ErrNotStarted is returned by calls that need a started consumer.
	ErrNotStarted = errors.New("consumer: not started")
	// ErrNotSupported is returned for features rmqpush does not implement yet.
	ErrNotSupported = errors.New("consumer: not supported")
)

// SubscriptionRefusedError is returned by Start when a broker serving a topic refuses
// its SQL92 subscription (CHECK_CLIENT_CONFIG): a broker without
// enablePropertyFilter=true answers SYSTEM_ERROR (1), one that cannot parse the
// expression SUBSCRIPTION_PARSE_FAILED (23) with its parser's message.
type SubscriptionRefusedError struct {
	Topic      string // the subscribed topic
	Expression string // the SQL92 expression
	BrokerName string // the broker that refused it
	BrokerAddr string // its address
	Code       int32  // the broker's response code
	Remark     string // the broker's remark
}

// Error names the topic, the broker and the broker's answer.
func (e *SubscriptionRefusedError) Error() string {
	s := "broker " + e.BrokerName + " (" + e.BrokerAddr + ") refused the SQL92 subscription of topic " +
		strconv.Quote(e.Topic) + " (" + strconv.Quote(e.Expression) + "): code " + strconv.Itoa(int(e.Code)) +
		": " + e.Remark
	if strings.HasPrefix(e.Remark, "The broker does not support consumer to filter message by") {
		s += " (start the broker with enablePropertyFilter=true)"
	}
	return s
}
