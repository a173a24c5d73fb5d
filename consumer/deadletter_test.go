package consumer

import (
	"errors"
	"testing"

	"github.com/rmqpush/rmqpush/message"
)

// deadLetter follows the path the send-back took: the broker's CONSUMER_SEND_MSG_BACK
// honours delay level -1, the fallback's copy (one more reconsume time, no delay level)
// only the reconsume times, and nothing is dead-lettered when both failed.
func TestDeadLetter(t *testing.T) {
	const maxTimes = 16
	for _, tc := range []struct {
		name     string
		e        SendBackEvent
		rt       int32
		expected bool
	}{
		{"broker retry", SendBackEvent{DelayLevel: 0}, 3, false},
		{"broker level -1", SendBackEvent{DelayLevel: -1}, 3, true},
		{"broker at max", SendBackEvent{DelayLevel: 0}, maxTimes, true},
		{"fallback level -1", SendBackEvent{DelayLevel: -1, Fallback: true}, 3, false},
		{"fallback copy reaches max", SendBackEvent{Fallback: true}, maxTimes - 1, false},
		{"fallback copy past max", SendBackEvent{Fallback: true}, maxTimes, true},
		{"both failed", SendBackEvent{DelayLevel: -1, Fallback: true, Err: errors.New("x")}, maxTimes, false},
	} {
		tc.e.Msg = &message.Ext{ReconsumeTimes: tc.rt}
		if got := deadLetter(tc.e, maxTimes); got != tc.expected {
			t.Errorf("%s: DeadLetter %v, want %v", tc.name, got, tc.expected)
		}
	}
}
