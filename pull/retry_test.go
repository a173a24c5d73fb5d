package pull

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// Found by the reliability suite (scenario C): after a broker restart the first pull
// is refused with SUBSCRIPTION_NOT_EXIST; waiting a second for it, as for any broker
// error, put resumption 1–2 s after the broker answered. The heartbeat takes
// milliseconds, so the pull is retried 50 ms later; a lost connection is retried after
// half a second.
func TestRetryAfterAPullError(t *testing.T) {
	broker := func(code int32) error {
		return fmt.Errorf("pull: %w", &protocol.BrokerError{Addr: "127.0.0.1:10911", RequestCode: protocol.RequestPullMessage, Code: code})
	}
	for _, tc := range []struct {
		name      string
		err       error
		delay     time.Duration
		heartbeat bool
	}{
		{"flow control", broker(protocol.ResponseFlowControl), DelayBrokerFlowControl, false},
		{"subscription not exist", broker(protocol.ResponseSubscriptionNotExist), DelayAwaitHeartbeat, true},
		{"subscription not latest", broker(protocol.ResponseSubscriptionNotLatest), DelayAwaitHeartbeat, true},
		{"group not exist", broker(protocol.ResponseSubscriptionGroupNotExist), DelayAwaitHeartbeat, true},
		{"connection lost", fmt.Errorf("pull: %w", &remoting.ConnError{Addr: "127.0.0.1:10911", Err: io.EOF}), DelayConnError, false},
		{"system busy", broker(protocol.ResponseSystemBusy), DelayError, false},
		{"anything else", errors.New("boom"), DelayError, false},
	} {
		delay, heartbeat, why := retryAfter(tc.err)
		require.Equal(t, tc.delay, delay, tc.name)
		require.Equal(t, tc.heartbeat, heartbeat, tc.name)
		require.NotEmpty(t, why, tc.name)
	}
	require.Less(t, DelayAwaitHeartbeat, DelayConnError)
	require.Less(t, DelayConnError, DelayError)
}

func TestLogLimiterLetsOneLineThroughPerSecond(t *testing.T) {
	var l logLimiter
	ok, _ := l.allow()
	require.True(t, ok)
	for range 3 {
		ok, _ = l.allow()
		require.False(t, ok)
	}
	l.last.Store(time.Now().Add(-2 * time.Second).UnixNano()) // a second later
	ok, held := l.allow()
	require.True(t, ok)
	require.Equal(t, int64(3), held)
}
