package reliability

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/test/fakebroker/control"
	"github.com/rmqpush/rmqpush/test/reliability/record"
)

// exitStat is what a consumer left behind when churn ended it: the messages it
// recorded at or past the offset the broker had committed for their queue, which the
// queue's next owner consumes again.
type exitStat struct {
	name   string
	how    string // endKilled or endTermed
	took   time.Duration
	queues int // queues with such messages
	beyond int // messages recorded at or past the committed offset
	// contiguous counts those in an unbroken run from the committed offset: consumed and
	// acknowledged in order, but the offset was not committed yet (commit lag).
	contiguous int
	// aboveGap counts the others: acknowledged above a message that was not (still in a
	// listener call, or cached): the offset cannot pass that message, so neither
	// can the commit (concurrent consumption's out-of-order window).
	aboveGap int
	offsets  map[queueKey]control.QueueOffsets
}

// snapshotExit reads the committed offsets right after cp is gone, before any other
// member can take its queues over (they wait the takeover grace, 1 s).
func (e *env) snapshotExit(ctx context.Context, cp *consumerProc) (*exitStat, error) {
	offs, err := e.cl.offsetsByQueue(ctx, e.group, e.topic)
	if err != nil {
		return nil, err
	}
	return &exitStat{name: cp.name, how: cp.ended, took: cp.exitAt.Sub(cp.signalAt), offsets: offs}, nil
}

// analyse counts, from cp's records, what st's committed offsets leave to be consumed
// again.
func (e *env) analyse(st *exitStat, cp *consumerProc) error {
	if err := e.coll.refresh(); err != nil {
		return err
	}
	perQueue := map[queueKey][]int64{}
	for _, r := range e.coll.byPID(cp.pidNum) {
		k := queueKey{r.Broker, r.QueueID}
		o, ok := st.offsets[k]
		if !ok {
			continue
		}
		if r.QueueOffset >= max(o.Committed, 0) {
			perQueue[k] = append(perQueue[k], r.QueueOffset)
		}
	}
	for k, offs := range perQueue {
		slices.Sort(offs)
		offs = slices.Compact(offs)
		st.queues++
		st.beyond += len(offs)
		next := max(st.offsets[k].Committed, 0)
		for _, o := range offs {
			if o != next {
				break
			}
			st.contiguous++
			next++
		}
	}
	st.aboveGap = st.beyond - st.contiguous
	return nil
}

func (st *exitStat) String() string {
	return fmt.Sprintf("%s %s: %d recorded past the committed offset on %d queues (%d in order, %d above a gap), gone in %v",
		st.name, st.how, st.beyond, st.queues, st.contiguous, st.aboveGap, st.took.Round(time.Millisecond))
}

// exitSummary sums the exits' figures into a note.
func exitSummary(stats []*exitStat) (string, int) {
	if len(stats) == 0 {
		return "", 0
	}
	var beyond, contiguous, gap, queues int
	var took time.Duration
	per := make([]string, 0, len(stats))
	for _, st := range stats {
		beyond += st.beyond
		contiguous += st.contiguous
		gap += st.aboveGap
		queues += st.queues
		took += st.took
		per = append(per, fmt.Sprint(st.beyond))
	}
	n := len(stats)
	return fmt.Sprintf("%d %s: %d messages recorded past the broker's committed offset (per exit: %s; mean %.1f over %.1f queues: %.1f in order = commit lag, %.1f above a gap = out-of-order window); mean exit %v",
		n, stats[0].how, beyond, strings.Join(per, ", "), float64(beyond)/float64(n), float64(queues)/float64(n),
		float64(contiguous)/float64(n), float64(gap)/float64(n), (took / time.Duration(n)).Round(time.Millisecond)), beyond
}

// dupCauses classifies every duplicate delivery by what happened to the consumer that
// had recorded the message before: killed, stopped, or still alive (a handover between
// live members), and returns "cause: count" pairs.
func (e *env) dupCauses(poison string) []string {
	counts := map[string]int{}
	for id := range e.coll.byID {
		if id == poison {
			continue
		}
		recs := e.coll.okRecords(id)
		for i := 1; i < len(recs); i++ {
			counts[e.cause(recs[i-1], recs[i])]++
		}
	}
	var out []string
	for c, n := range counts {
		out = append(out, fmt.Sprintf("%s: %d", c, n))
	}
	sort.Strings(out)
	return out
}

func (e *env) cause(prev, next record.Record) string {
	cp := e.byPID[prev.PID]
	switch {
	case next.ReconsumeTimes > prev.ReconsumeTimes:
		return "a retry of a message recorded ok"
	case prev.PID == next.PID:
		return "same consumer twice"
	case cp == nil:
		return "unknown consumer"
	case cp.ended == endKilled && !prev.At.After(cp.exitAt):
		return "previous consumer killed (SIGKILL)"
	case cp.ended == endTermed && !prev.At.After(cp.exitAt):
		return "previous consumer stopped (SIGTERM)"
	default:
		return "previous consumer alive (handover)"
	}
}
