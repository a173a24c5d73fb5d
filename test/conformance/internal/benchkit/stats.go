package benchkit

import (
	"slices"
	"time"
)

// Percentile returns the q-quantile (0 < q <= 1) of sorted by the nearest-rank method,
// or 0 for an empty slice.
func Percentile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted))+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// Median returns the median of xs (the lower middle for an even count), or 0.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func micros(ns int64) float64 { return float64(ns) / float64(time.Microsecond) }
