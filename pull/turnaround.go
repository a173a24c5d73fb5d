package pull

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Turnaround summarises how long the service took from reading a pull's FOUND answer
// to sending the queue's next pull, for the pulls nothing held back (flow control, the
// pull interval, a suspended consumer): the time a queue's pipeline stands still on the
// client's side. Against a busy broker every microsecond of it is throughput lost, as
// each queue has one pull in flight.
type Turnaround struct {
	Count    int64         // pulls measured since Start
	P50, P99 time.Duration // percentiles, to within 1/8 (histogram buckets)
	Max      time.Duration // the longest, to within 1/8
}

// Buckets of the turnaround histogram: subBuckets per power of two of microseconds, from
// below 1 µs to beyond 2^maxPow2 µs (about 67 s).
const (
	subBucketBits = 3
	subBuckets    = 1 << subBucketBits
	maxPow2       = 26
	histBuckets   = (maxPow2 + 1) * subBuckets
)

// histogram counts durations in log-linear buckets with atomic adds: recording costs one
// atomic increment, and readers compute percentiles from a copy.
type histogram struct {
	counts [histBuckets]atomic.Int64
	n      atomic.Int64
}

// bucket returns the bucket of a duration of us microseconds.
func bucket(us uint64) int {
	if us < subBuckets {
		return int(us)
	}
	pow := bits.Len64(us) - 1 // ≥ subBucketBits
	sub := int(us>>(pow-subBucketBits)) & (subBuckets - 1)
	b := (pow-subBucketBits+1)*subBuckets + sub
	return min(b, histBuckets-1)
}

// bucketTop returns the largest duration bucket b holds (its upper bound).
func bucketTop(b int) time.Duration {
	if b < subBuckets {
		return time.Duration(b) * time.Microsecond
	}
	pow := b/subBuckets - 1 + subBucketBits
	sub := b % subBuckets
	lo := uint64(subBuckets+sub) << (pow - subBucketBits)
	width := uint64(1) << (pow - subBucketBits)
	return time.Duration(lo+width-1) * time.Microsecond
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucket(uint64(d/time.Microsecond))].Add(1)
	h.n.Add(1)
}

// summary returns the count, percentiles and maximum of what was recorded.
func (h *histogram) summary() Turnaround {
	var counts [histBuckets]int64
	var total int64
	for i := range counts {
		counts[i] = h.counts[i].Load()
		total += counts[i]
	}
	t := Turnaround{Count: total}
	if total == 0 {
		return t
	}
	p50, p99 := (total+1)/2, total-total/100
	var seen int64
	for i, c := range counts {
		if c == 0 {
			continue
		}
		seen += c
		if t.P50 == 0 && seen >= p50 {
			t.P50 = bucketTop(i)
		}
		if t.P99 == 0 && seen >= p99 {
			t.P99 = bucketTop(i)
		}
		t.Max = bucketTop(i)
	}
	return t
}
