package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// CONSUME_MESSAGE_DIRECTLY (mqadmin queryMsgById -d): the broker has a consumer run its
// listener on one stored message; the listener's context is live during the call.
func TestConsumeMessageDirectly(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	b := c.Brokers()[0]
	var mu sync.Mutex
	var got []string
	var ctxErr error
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithConsumeFromWhere(consumer.ConsumeFromLastOffset)),
		func(ctx context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				got = append(got, string(m.Body))
			}
			ctxErr = ctx.Err()
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	// Stored before the consumer's queue starts at the last offset: only the admin call
	// delivers it.
	waitFor(t, 5*time.Second, "the consumer registered", func() bool { return len(b.Clients("g")) == 1 })
	produced, err := b.Produce("t", 0, &message.Message{Topic: "t", Body: []byte("direct")})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := b.ConsumeMessageDirectly(ctx, "g", b.Clients("g")[0], produced[0].OffsetMsgID)
	require.NoError(t, err)
	require.Equal(t, "CR_SUCCESS", res.ConsumeResult.String())
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, got, "direct")
	require.NoError(t, ctxErr)
}
