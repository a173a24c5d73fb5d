package consumer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A run's calls are counted in a tally and recorded together: the topic's counters
// hold every call once, the clamped ack indexes included, and the tally starts over.
func TestCallTallyRecordsARunOnce(t *testing.T) {
	s := newStats()
	var tally callTally
	tally.add(2*time.Millisecond, true, 1, 0)  // one good
	tally.add(3*time.Millisecond, true, 4, 1)  // two good, two failed
	tally.add(1*time.Millisecond, false, 2, 1) // ReconsumeLater: both failed
	s.record("t", &tally)
	require.Equal(t, callTally{}, tally)
	s.record("t", &tally) // empty: nothing, and no topic made
	s.consumed("t", time.Millisecond, true, 1, 0)

	tc := s.topic("t")
	require.Equal(t, int64(4), tc.calls.Load())
	require.Equal(t, int64(7*time.Millisecond), tc.consumeNanos.Load())
	require.Equal(t, int64(4), tc.ok.Load())
	require.Equal(t, int64(4), tc.failed.Load())
	require.Len(t, *s.topics.Load(), 1)
}
