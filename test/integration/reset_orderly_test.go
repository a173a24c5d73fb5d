package integration

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestOrderlyResetSurvivesLongListenerCall: an admin resets an orderly queue's offset
// to 0 while a listener call on it outlives removeLockWait (1 s), so the restart's
// BeforeRemove declines and the queue stays dropped for a later pass. The reset must
// still take effect: that pass persists the reset offset (recorded and frozen before
// BeforeRemove), not the old one, and recreates the queue there, so m-0 comes again.
func TestOrderlyResetSurvivesLongListenerCall(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	b := c.Brokers()[0]
	produce(t, c, "t", "m", 40, "")
	var mu sync.Mutex
	seen := map[string]int{}
	blocked := make(chan struct{})
	pc := startOrderly(t, "g", "t", fastOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
			body := string(msgs[0].Body)
			mu.Lock()
			seen[body]++
			n := seen[body]
			mu.Unlock()
			if body == "m-20" && n == 1 {
				close(blocked)
				time.Sleep(2500 * time.Millisecond) // a slow call: longer than removeLockWait
			}
			return consumer.OrderlySuccess
		})
	defer shutdown(t, pc)
	<-blocked
	waitFor(t, 10*time.Second, "the group's first commit", func() bool {
		_, ok := b.CommittedOffset("g", "t", 0)
		return ok
	})
	_, err := c.ResetOffsetByTime("g", "t", 0, true)
	require.NoError(t, err)
	waitFor(t, 15*time.Second, "the replay of m-0 after the reset to offset 0", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen["m-0"] >= 2
	}, func() string {
		off, _ := b.CommittedOffset("g", "t", 0)
		mu.Lock()
		defer mu.Unlock()
		return "committed offset " + strconv.FormatInt(off, 10) + ", m-39 seen " + strconv.Itoa(seen["m-39"]) + " times"
	})
}
