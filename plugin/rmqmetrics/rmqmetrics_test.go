package rmqmetrics

import (
	"slices"
	"testing"
)

func TestEveryMetricIsDescribedAndBucketsAscend(t *testing.T) {
	for _, name := range []string{ProcessTime, AwaitTime, CachedMessages, CachedBytes, LagMessages, LagLatency, Pulls,
		PullLatency, PulledMessages, SendBacks, DeadLetters, LocalRetries} {
		if Description(name) == "" {
			t.Errorf("%s has no description", name)
		}
	}
	for _, b := range [][]float64{ProcessTimeBuckets(), AwaitTimeBuckets(), PullLatencyBuckets()} {
		if !slices.IsSorted(b) {
			t.Errorf("buckets %v do not ascend", b)
		}
	}
	b := ProcessTimeBuckets()
	b[0] = 99
	if ProcessTimeBuckets()[0] != 1 {
		t.Error("a caller changed the buckets")
	}
}
