package reliability

import (
	"slices"
	"sort"
	"time"

	"github.com/rmqpush/rmqpush/test/reliability/record"
)

// collector reads every consumer's record file as it grows and keeps the records by
// message id.
type collector struct {
	tails []*record.Tail
	byID  map[string][]record.Record
	okIDs int // ids with at least one "ok" record
	total int // records read
}

func newCollector() *collector { return &collector{byID: make(map[string][]record.Record)} }

// add starts reading a record file.
func (c *collector) add(path string) { c.tails = append(c.tails, record.NewTail(path)) }

// refresh reads what the files gained since the last call.
func (c *collector) refresh() error {
	for _, t := range c.tails {
		recs, err := t.Next()
		for _, r := range recs {
			c.addRecord(r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *collector) addRecord(r record.Record) {
	prev := c.byID[r.ID]
	if r.Status == record.StatusOK && !slices.ContainsFunc(prev, isOK) {
		c.okIDs++
	}
	c.byID[r.ID] = append(prev, r)
	c.total++
}

func isOK(r record.Record) bool { return r.Status == record.StatusOK }

// okRecords returns id's "ok" records in time order.
func (c *collector) okRecords(id string) []record.Record {
	var out []record.Record
	for _, r := range c.byID[id] {
		if isOK(r) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// all returns id's records (any status) in time order.
func (c *collector) all(id string) []record.Record {
	out := slices.Clone(c.byID[id])
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// duplicateCount returns the extra "ok" records of ids other than skip.
func (c *collector) duplicateCount(skip string) int {
	n := 0
	for id, recs := range c.byID {
		if id == skip {
			continue
		}
		ok := 0
		for _, r := range recs {
			if isOK(r) {
				ok++
			}
		}
		n += max(ok-1, 0)
	}
	return n
}

// byPID returns the "ok" records of the main topic (reconsume times 0) written by pid.
func (c *collector) byPID(pid int) []record.Record {
	var out []record.Record
	for _, recs := range c.byID {
		for _, r := range recs {
			if r.PID == pid && isOK(r) && r.ReconsumeTimes == 0 {
				out = append(out, r)
			}
		}
	}
	return out
}

// firstAfter returns the earliest record of broker's queues (main topic) at or after t,
// and whether there is one.
func (c *collector) firstAfter(broker string, t time.Time) (record.Record, bool) {
	var best record.Record
	found := false
	for _, recs := range c.byID {
		for _, r := range recs {
			if r.Broker == broker && r.ReconsumeTimes == 0 && !r.At.Before(t) && (!found || r.At.Before(best.At)) {
				best, found = r, true
			}
		}
	}
	return best, found
}

// lastBefore returns the latest record of broker's queues (main topic) before t.
func (c *collector) lastBefore(broker string, t time.Time) (record.Record, bool) {
	var best record.Record
	found := false
	for _, recs := range c.byID {
		for _, r := range recs {
			if r.Broker == broker && r.ReconsumeTimes == 0 && r.At.Before(t) && (!found || r.At.After(best.At)) {
				best, found = r, true
			}
		}
	}
	return best, found
}

// countBetween returns how many "ok" records of broker's queues were written in
// [from, to).
func (c *collector) countBetween(broker string, from, to time.Time) int {
	n := 0
	for _, recs := range c.byID {
		for _, r := range recs {
			if r.Broker == broker && isOK(r) && !r.At.Before(from) && r.At.Before(to) {
				n++
			}
		}
	}
	return n
}
