package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/test/fakebroker"
	"github.com/rmqpush/rmqpush/test/scale"
)

func TestParse(t *testing.T) {
	s, err := parse([]string{"-topics", "10", "-consumers", "1, 3"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 10, s.topics)
	require.Equal(t, []int{1, 3}, s.consumers)
	_, err = parse([]string{"-consumers", "0"}, io.Discard)
	require.ErrorContains(t, err, "want positive counts")
	_, err = parse([]string{"-queues", "0"}, io.Discard)
	require.Error(t, err)
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	writeTable(&b, settings{topics: 250, queues: 4, brokers: 2}, []scale.Result{{
		Consumers: 8, Queues: 2002, Start: []time.Duration{time.Second, 700 * time.Millisecond, 1100 * time.Millisecond},
		FirstPass: []time.Duration{900 * time.Millisecond}, HeartbeatBytes: 35 << 10, GoroutinesBefore: 4, Goroutines: 252,
		RSS: 119e6, RSSBefore: 25e6, IdleCPU: 0.054,
		IdleRequests: map[int32]float64{fakebroker.RequestPullMessage: 1067.7, fakebroker.RequestGetRouteInfoByTopic: 66.9},
	}})
	out := b.String()
	require.Contains(t, out, "250 topics × 4 queues × 2 brokers")
	require.Contains(t, out, "| 8 | 2002 | 1s (700ms–1.1s) | 900ms | – | 35.0 KiB, – | 252 (+31.0 each) | 119.0 MB (+94.0) |")
	require.Contains(t, out, "| 5.40 % of a core | 1134.6 (pull 1067.7, route 66.9) |")
}
