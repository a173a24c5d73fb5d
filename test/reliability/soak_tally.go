package reliability

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/test/reliability/record"
)

// soakTally counts a soak's deliveries compactly: ids are "<prefix><n>" with n counting
// from 0, so the first delivery of each is one int64 in a slice, where the scenarios'
// collector keeps every record of every id (9 million messages would take gigabytes).
type soakTally struct {
	prefix string
	tails  []*record.Tail
	first  []int64   // unix nanoseconds of id n's first ok record; 0: none yet
	ok     int       // ids with an ok record
	dups   []soakDup // every ok record after an id's first
	bad    int       // records whose id is not the soak's
}

// soakDup is a message delivered again.
type soakDup struct {
	id            string
	first, second time.Time
	pid           int // of the second delivery
}

func newSoakTally(prefix string) *soakTally { return &soakTally{prefix: prefix} }

// soakID is the id of message n.
func soakID(prefix string, n int) string { return fmt.Sprintf("%s%09d", prefix, n) }

func (t *soakTally) add(path string) { t.tails = append(t.tails, record.NewTail(path)) }

// refresh reads what the record files gained.
func (t *soakTally) refresh() error {
	for _, tl := range t.tails {
		recs, err := tl.Next()
		for _, r := range recs {
			t.record(r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *soakTally) record(r record.Record) {
	if r.Status != record.StatusOK {
		return
	}
	num, ok := strings.CutPrefix(r.ID, t.prefix)
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 || n > 1<<31 {
		t.bad++
		return
	}
	if n >= len(t.first) {
		t.first = append(t.first, make([]int64, n+1-len(t.first))...)
	}
	if t.first[n] == 0 {
		t.first[n] = r.At.UnixNano()
		t.ok++
		return
	}
	t.dups = append(t.dups, soakDup{id: r.ID, first: time.Unix(0, t.first[n]), second: r.At, pid: r.PID})
}

// lost returns how many of the first n ids have no ok record, and the first few.
func (t *soakTally) lost(n int) (int, []string) {
	count := 0
	var some []string
	for i := range n {
		if i >= len(t.first) || t.first[i] == 0 {
			count++
			if len(some) < 10 {
				some = append(some, soakID(t.prefix, i))
			}
		}
	}
	return count, some
}
