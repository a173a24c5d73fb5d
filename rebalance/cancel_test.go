package rebalance

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/logging"
)

// lines keeps the log lines at warning level and above.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) Level() logging.Level { return logging.LevelWarn }
func (l *lines) Log(level logging.Level, msg string, kv ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, fmt.Sprint(level, " ", msg, kv))
}

// A pass cut short by Shutdown (its context cancelled while it waits on the broker) is
// not a failure: it logs nothing and schedules no retry.
func TestCancelledPassIsNotAWarning(t *testing.T) {
	log := &lines{}
	h := newHarness(t, func(c *Config) { c.Logger = log })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.broker.idsErr = fmt.Errorf("GET_CONSUMER_LIST_BY_GROUP: %w", context.Canceled)
	h.r.rebalanceTopic(ctx, "t")
	h.broker.idsErr = nil
	h.broker.queryErr = fmt.Errorf("QUERY_CONSUMER_OFFSET: %w", context.Canceled)
	h.r.rebalanceTopic(ctx, "t")
	require.Empty(t, log.lines())

	h.broker.idsErr = fmt.Errorf("GET_CONSUMER_LIST_BY_GROUP: broker down")
	h.r.rebalanceTopic(context.Background(), "t")
	require.Len(t, log.lines(), 1, "a real failure is still a warning")
}

func (l *lines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}
