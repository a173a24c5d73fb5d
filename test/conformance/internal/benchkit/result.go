package benchkit

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Result is what a worker measured, printed as "result <json>".
type Result struct {
	Client  string `json:"client"`  // rmqpush, peer, raw
	Mode    string `json:"mode"`    // consume, latency, idle
	Variant string `json:"variant"` // default, tuned
	Topic   string `json:"topic"`
	N       int64  `json:"n"`        // messages expected
	Got     int64  `json:"received"` // messages received (duplicates included)

	// consume and latency
	Seconds        float64 `json:"seconds"`         // first message to the N-th
	StartSeconds   float64 `json:"start_seconds"`   // Start called to first message
	MsgsPerSec     float64 `json:"msgs_per_sec"`    // N / Seconds
	CPUSeconds     float64 `json:"cpu_seconds"`     // user+sys, Start to the N-th message
	CPUPerMillion  float64 `json:"cpu_per_million"` // CPUSeconds per 10^6 messages
	MallocsPerMsg  float64 `json:"mallocs_per_msg"` // runtime.MemStats.Mallocs delta per message
	BytesPerMsg    float64 `json:"bytes_per_msg"`   // TotalAlloc delta per message
	NumGC          uint32  `json:"num_gc"`
	ReadsPerMsg    float64 `json:"reads_per_msg"`   // read system calls per message (/proc/self/io syscr)
	WritesPerMsg   float64 `json:"writes_per_msg"`  // write system calls per message (syscw)          // collections in the phase
	MaxRSSKiB      int64   `json:"max_rss_kib"`     // VmHWM: the process's peak RSS
	PeakGoroutines int     `json:"peak_goroutines"` // sampled, the kit's sampler excluded
	AvgGoroutines  float64 `json:"avg_goroutines"`  // idle: mean over the window
	RSSKiB         int64   `json:"rss_kib"`         // VmRSS at the end
	CPUPercent     float64 `json:"cpu_percent"`     // idle: CPU over the window, % of one core
	WindowSeconds  float64 `json:"window_seconds"`  // idle
	LatencyCount   int     `json:"latency_count"`   // latency: measured messages (warm-up excluded)
	P50Micros      float64 `json:"p50_us"`          // latency percentiles, consume minus send time
	P99Micros      float64 `json:"p99_us"`
	P999Micros     float64 `json:"p999_us"`
	MaxMicros      float64 `json:"max_us"`
	// Pull turnaround, reported by clients that measure it (TurnaroundReporter): from
	// reading a FOUND answer to sending the queue's next pull.
	TurnaroundCount     int64   `json:"turnaround_count,omitempty"`
	TurnaroundP50Micros float64 `json:"turnaround_p50_us,omitempty"`
	TurnaroundP99Micros float64 `json:"turnaround_p99_us,omitempty"`
	Error               string  `json:"error,omitempty"` // what went wrong, if anything
}

// resultPrefix starts the result line.
const resultPrefix = "result "

// FormatResult returns r as a result line (without the newline).
func FormatResult(r *Result) string {
	b, err := json.Marshal(r)
	if err != nil { // a struct of numbers and strings: cannot fail
		panic(err)
	}
	return resultPrefix + string(b)
}

// ParseResult parses a result line; ok is false when line is not one.
func ParseResult(line string) (r Result, ok bool, err error) {
	rest, found := strings.CutPrefix(line, resultPrefix)
	if !found {
		return r, false, nil
	}
	if err := json.Unmarshal([]byte(rest), &r); err != nil {
		return r, true, fmt.Errorf("benchkit: bad result line %q: %w", line, err)
	}
	return r, true, nil
}

// Worker lines other than the result.
const (
	LineReady       = "ready"
	LineWindowStart = "window-start"
	LineWindowEnd   = "window-end"
)
