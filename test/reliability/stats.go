package reliability

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// sample is one line of a consumer's stats file.
type sample struct {
	at         time.Time
	goroutines int
	heap       int64 // live heap after a GC, bytes
	handled    int64
}

// readSamples reads a consumer's stats file.
func readSamples(path string) ([]sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s, err := parseSample(sc.Text())
		if err != nil {
			return out, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseSample reads "<unixNanos> goroutines=<n> heap=<bytes> handled=<n>".
func parseSample(line string) (sample, error) {
	f := strings.Fields(line)
	if len(f) != 4 {
		return sample{}, fmt.Errorf("stats line %q: %d fields, want 4", line, len(f))
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return sample{}, fmt.Errorf("stats line %q: time: %w", line, err)
	}
	s := sample{at: time.Unix(0, ns)}
	vals := map[string]*int64{"heap": &s.heap, "handled": &s.handled}
	var g int64
	vals["goroutines"] = &g
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		dst := vals[k]
		if !ok || dst == nil {
			return sample{}, fmt.Errorf("stats line %q: unknown field %q", line, kv)
		}
		if *dst, err = strconv.ParseInt(v, 10, 64); err != nil {
			return sample{}, fmt.Errorf("stats line %q: %s: %w", line, k, err)
		}
	}
	s.goroutines = int(g)
	return s, nil
}

// lastBefore returns the last sample taken before t.
func lastSampleBefore(samples []sample, t time.Time) (sample, bool) {
	var best sample
	found := false
	for _, s := range samples {
		if s.at.Before(t) {
			best, found = s, true
		}
	}
	return best, found
}

// peak returns the sample with the most goroutines and the largest heap between from
// and to.
func peak(samples []sample, from, to time.Time) (goroutines int, heap int64) {
	for _, s := range samples {
		if s.at.Before(from) || s.at.After(to) {
			continue
		}
		goroutines = max(goroutines, s.goroutines)
		heap = max(heap, s.heap)
	}
	return goroutines, heap
}
