package pull

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Extend does nothing after Stop: the messages of tasks dropped at shutdown are never
// consumed here, and extending them would delay their redelivery by an invisible time.
func TestPopExtendStopsWithStop(t *testing.T) {
	h := newPopHarness(t, func(c *PopConfig) { c.InvisibleTime = time.Second })
	h.svc.Submit(h.req)
	popFound(t, h.nextPop(t), 0, 3, "")
	<-h.disp.batches // dispatched, never consumed
	h.svc.Stop()
	h.svc.Extend(time.Now().Add(700 * time.Millisecond))
	require.NoError(t, h.svc.Flush(context.Background()))
	h.svc.Extend(time.Now().Add(700 * time.Millisecond))
	h.broker.mu.Lock()
	defer h.broker.mu.Unlock()
	require.Empty(t, h.broker.changes, "extensions sent after Stop")
}
