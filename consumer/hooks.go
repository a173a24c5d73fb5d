package consumer

import (
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// ConsumeHook observes every listener call, for tracing and metrics. Hooks run on the
// consume worker around the listener call and must be quick; a hook that panics is a bug
// in the hook and is not recovered.
type ConsumeHook interface {
	// BeforeConsume runs just before the listener gets msgs from q.
	BeforeConsume(group string, q message.Queue, msgs []*message.Ext)
	// AfterConsume runs after the listener returned (or panicked): success reports
	// whether the batch counts as consumed (all of it, for a partial AckIndex see the
	// status), status is the listener's status name, took is the call's duration.
	AfterConsume(group string, q message.Queue, msgs []*message.Ext, status string, success bool, took time.Duration)
}
