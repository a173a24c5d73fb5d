package consumer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/processqueue"
)

// A lock granted again is taken as held all along only if it never lapsed past the
// broker's expiry: a lock whose renewals failed for longer may have gone to another
// client meanwhile, and goes through regain.
func TestHeldAllAlongOnlyWithinTheBrokerExpiry(t *testing.T) {
	now := time.Now()
	pq := processqueue.New(now)
	require.False(t, heldAllAlong(pq, now), "never locked")

	pq.SetLocked(true, now.Add(-brokerLockExpiry+time.Second))
	require.True(t, heldAllAlong(pq, now), "renewals failed for a while, within the expiry")

	pq.SetLocked(true, now.Add(-brokerLockExpiry-time.Second))
	require.False(t, heldAllAlong(pq, now), "lapsed past the broker's expiry")

	pq.SetLocked(true, now)
	pq.SetLocked(false, now)
	require.False(t, heldAllAlong(pq, now), "lost")
}
