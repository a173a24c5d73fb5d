package pull

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/processqueue"
)

// lines is a Logger that keeps what it is given.
type lines struct {
	mu  sync.Mutex
	out []string
}

func (l *lines) Level() logging.Level { return logging.LevelDebug }
func (l *lines) Log(level logging.Level, msg string, kv ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, fmt.Sprint(level, " ", msg, kv))
}

func (l *lines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.out...)
}

func TestFilterRefusalsAreRecognised(t *testing.T) {
	for _, tc := range []struct {
		code   int32
		remark string
		want   bool
	}{
		{protocol.ResponseSubscriptionParseFailed, "parse the consumer's subscription failed", true},
		{protocol.ResponseFilterDataNotExist, "The broker's consumer filter data is not exist!Your expression may be wrong!", true},
		{protocol.ResponseSystemError, "The broker does not support consumer to filter message by SQL92", true},
		{protocol.ResponseSystemError, "anything else", false},
		{protocol.ResponseFilterDataNotLatest, "the consumer's consumer filter data not latest", false},
	} {
		require.Equal(t, tc.want, isFilterRefusal(&protocol.BrokerError{Code: tc.code, Remark: tc.remark}), tc.remark)
	}
	delay, heartbeat, _ := retryAfter(&protocol.BrokerError{Code: protocol.ResponseFilterDataNotLatest})
	require.Equal(t, DelayAwaitHeartbeat, delay)
	require.True(t, heartbeat)
}

// A first refusal may be a restarted broker's passing one: pulled again after a second.
// A second in a row stops the queue's pulls (asked again only after DelayFilterRefused),
// with an ERROR naming the expression; an answer clears the refusal.
func TestFilterRefusedStopsTheQueue(t *testing.T) {
	log := &lines{}
	sd, err := protocol.BuildSubscriptionOfType("t", protocol.ExpressionTypeSQL92, "a > AND")
	require.NoError(t, err)
	h := newHarness(t, func(c *Config) { c.Logger = log; c.Subs = subs{"t": sd} })
	r := NewRequest(testQueue, processqueue.New(time.Now()), 0)
	h.svc.Submit(r)
	refuse := func(c pullCall) {
		c.cb(nil, fmt.Errorf("pull: %w", &protocol.BrokerError{Addr: "127.0.0.1:10911", RequestCode: protocol.RequestPullMessage,
			Code: protocol.ResponseFilterDataNotExist, Remark: "The broker's consumer filter data is not exist!Your expression may be wrong!"}))
	}
	c := h.nextCall(t)
	require.Equal(t, protocol.ExpressionTypeSQL92, c.h.ExpressionType)
	begin := time.Now()
	refuse(c)
	require.Contains(t, r.FilterRefused(), "FILTER_DATA_NOT_EXIST")
	c = h.nextCall(t)
	require.GreaterOrEqual(t, time.Since(begin), DelayError)
	c.cb(&client.PullResult{Status: client.PullNoNewMsg, NextBeginOffset: 0}, nil)
	require.Empty(t, r.FilterRefused(), "an answer clears it")

	refuse(h.nextCall(t))
	refuse(h.nextCall(t))
	require.NotEmpty(t, r.FilterRefused())
	h.noCall(t, DelayError+DelayError/2)
	require.Equal(t, 1, h.svc.Pending(), "waiting for DelayFilterRefused")
	var errorLines []string
	for _, l := range log.get() {
		if l[:len(fmt.Sprint(logging.LevelError))] == fmt.Sprint(logging.LevelError) {
			errorLines = append(errorLines, l)
		}
	}
	require.Len(t, errorLines, 1)
	require.Contains(t, errorLines[0], "a > AND")
}
