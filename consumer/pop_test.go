package consumer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

// A failed popped message's retry delay is Java's: popDelayLevel[reconsume times], or
// the level the context asks for; the last one beyond the table; the dead-letter queue
// from MaxReconsumeTimes on, or for level -1.
func TestPopRetryDelays(t *testing.T) {
	c := &PushConsumer{cfg: defaultCfg(), listener: ConcurrentlyFunc(nil)}
	for _, tc := range []struct {
		times, level int32
		action       processqueue.PopAction
		delay        time.Duration
	}{
		{0, 0, processqueue.PopActionRetry, 10 * time.Second}, // golden p_pop_533: 10 s
		{1, 0, processqueue.PopActionRetry, 30 * time.Second},
		{15, 0, processqueue.PopActionRetry, 2 * time.Hour},
		{0, 3, processqueue.PopActionRetry, 2 * time.Minute},
		{0, 40, processqueue.PopActionRetry, 2 * time.Hour},
		{0, -1, processqueue.PopActionDLQ, 2 * time.Hour},
		{16, 0, processqueue.PopActionDLQ, 2 * time.Hour},
	} {
		action, delay := c.popRetry(&message.Ext{ReconsumeTimes: tc.times}, tc.level)
		require.Equal(t, tc.action, action, "%+v", tc)
		require.Equal(t, tc.delay, delay, "%+v", tc)
	}
	c.cfg.maxReconsumeTimes = 2
	action, _ := c.popRetry(&message.Ext{ReconsumeTimes: 2}, 0)
	require.Equal(t, processqueue.PopActionDLQ, action)
}
