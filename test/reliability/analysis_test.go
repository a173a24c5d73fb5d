package reliability

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/test/fakebroker/control"
	"github.com/rmqpush/rmqpush/test/reliability/record"
)

// testEnv returns an env with a collector holding recs and the given consumers.
func testEnv(recs []record.Record, consumers ...*consumerProc) *env {
	e := &env{res: &Result{}, coll: newCollector(), byPID: map[int]*consumerProc{}}
	for _, r := range recs {
		e.coll.addRecord(r)
	}
	for _, cp := range consumers {
		e.byPID[cp.pidNum] = cp
	}
	return e
}

func rec(id string, pid int, broker string, q int32, off int64, at time.Time) record.Record {
	return record.Record{ID: id, Broker: broker, QueueID: q, QueueOffset: off, PID: pid, At: at, Status: record.StatusOK}
}

func TestAnalyseCountsWhatTheCommittedOffsetLeaves(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var recs []record.Record
	// pid 1 consumed a/0 offsets 0..9 and 12 (10 and 11 were in listener calls), and
	// b/1 offsets 0..4; pid 2 consumed a/1.
	for off := range int64(10) {
		recs = append(recs, rec("a0-"+string(rune('0'+off)), 1, "a", 0, off, t0))
	}
	recs = append(recs, rec("a0-12", 1, "a", 0, 12, t0))
	for off := range int64(5) {
		recs = append(recs, rec("b1-"+string(rune('0'+off)), 1, "b", 1, off, t0))
	}
	recs = append(recs, rec("a1-0", 2, "a", 1, 0, t0))
	cp := &consumerProc{pidNum: 1, proc: &proc{name: "consumer-00"}}
	e := testEnv(recs, cp)
	st := &exitStat{name: "consumer-00", how: endKilled, offsets: map[queueKey]control.QueueOffsets{
		{"a", 0}: {Committed: 6},
		{"b", 1}: {Committed: 5}, // everything committed
		{"a", 1}: {Committed: -1},
	}}
	require.NoError(t, e.analyse(st, cp))
	require.Equal(t, 5, st.beyond, "6, 7, 8, 9 and 12")
	require.Equal(t, 4, st.contiguous, "6 to 9")
	require.Equal(t, 1, st.aboveGap, "12, above 10 and 11")
	require.Equal(t, 1, st.queues)
	require.Contains(t, st.String(), "5 recorded past the committed offset on 1 queues (4 in order, 1 above a gap)")

	summary, total := exitSummary([]*exitStat{st, {how: endKilled}})
	require.Equal(t, 5, total)
	require.Contains(t, summary, "2 SIGKILL: 5 messages recorded past the broker's committed offset (per exit: 5, 0;")
	s, n := exitSummary(nil)
	require.Empty(t, s)
	require.Zero(t, n)
}

func TestDuplicatesAndTheirCauses(t *testing.T) {
	t0 := time.Unix(1000, 0)
	killed := &consumerProc{pidNum: 1, ended: endKilled, exitAt: t0.Add(time.Second), proc: &proc{}}
	stopped := &consumerProc{pidNum: 2, ended: endTermed, exitAt: t0.Add(time.Second), proc: &proc{}}
	alive := &consumerProc{pidNum: 3, proc: &proc{}}
	later := rec("p", 3, "a", 0, 5, t0)
	later.Status = record.StatusLater
	retry := rec("r", 3, "a", 0, 0, t0.Add(2*time.Second))
	retry.ReconsumeTimes = 1
	e := testEnv([]record.Record{
		rec("k", 1, "a", 0, 1, t0), rec("k", 3, "a", 0, 1, t0.Add(2*time.Second)),
		rec("s", 2, "a", 0, 2, t0), rec("s", 3, "a", 0, 2, t0.Add(2*time.Second)),
		rec("h", 3, "a", 0, 3, t0), rec("h", 1, "a", 0, 3, t0.Add(time.Millisecond)),
		rec("x", 9, "a", 0, 4, t0), rec("x", 3, "a", 0, 4, t0.Add(time.Millisecond)), rec("x", 3, "a", 0, 4, t0.Add(2*time.Millisecond)),
		rec("r", 3, "a", 0, 6, t0), retry,
		rec("once", 3, "a", 0, 7, t0),
		later, rec("p", 3, "a", 0, 5, t0.Add(time.Second)), rec("p", 3, "a", 0, 5, t0.Add(2*time.Second)),
	}, killed, stopped, alive)
	require.Equal(t, 7, e.coll.duplicateCount(""))
	require.Equal(t, 6, e.coll.duplicateCount("p"), "the poison's deliveries are not duplicates")
	require.Equal(t, 7, e.coll.okIDs)
	require.Equal(t, []string{
		"a retry of a message recorded ok: 1",
		"previous consumer alive (handover): 1",
		"previous consumer killed (SIGKILL): 1",
		"previous consumer stopped (SIGTERM): 1",
		"same consumer twice: 1",
		"unknown consumer: 1",
	}, e.dupCauses("p"))
	require.Len(t, e.coll.byPID(3), 9, "ok records of the main topic")
}

func TestFirstAfterAndLastBefore(t *testing.T) {
	t0 := time.Unix(1000, 0)
	e := testEnv([]record.Record{
		rec("1", 1, "a", 0, 0, t0), rec("2", 1, "a", 0, 1, t0.Add(2*time.Second)),
		rec("3", 1, "b", 0, 0, t0.Add(time.Second)), rec("4", 1, "a", 0, 2, t0.Add(3*time.Second)),
	})
	r, ok := e.coll.firstAfter("a", t0.Add(time.Second))
	require.True(t, ok)
	require.Equal(t, "2", r.ID)
	r, ok = e.coll.lastBefore("a", t0.Add(2*time.Second))
	require.True(t, ok)
	require.Equal(t, "1", r.ID)
	_, ok = e.coll.firstAfter("a", t0.Add(4*time.Second))
	require.False(t, ok)
	_, ok = e.coll.lastBefore("b", t0)
	require.False(t, ok)
}

func TestSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stats")
	require.NoError(t, os.WriteFile(path, []byte(
		"1000000000 goroutines=30 heap=1048576 handled=0\n"+
			"2000000000 goroutines=40 heap=8388608 handled=10\n"+
			"3000000000 goroutines=31 heap=2097152 handled=20\n"), 0o644))
	samples, err := readSamples(path)
	require.NoError(t, err)
	require.Len(t, samples, 3)
	require.Equal(t, sample{at: time.Unix(2, 0), goroutines: 40, heap: 8 << 20, handled: 10}, samples[1])
	s, ok := lastSampleBefore(samples, time.Unix(2, 500))
	require.True(t, ok)
	require.Equal(t, 40, s.goroutines)
	_, ok = lastSampleBefore(samples, time.Unix(1, 0))
	require.False(t, ok)
	g, h := peak(samples, time.Unix(2, 0), time.Unix(3, 0))
	require.Equal(t, 40, g)
	require.Equal(t, int64(8<<20), h)

	for _, bad := range []string{"1 goroutines=1 heap=2", "x goroutines=1 heap=2 handled=3", "1 goroutines=1 heap=2 fish=3", "1 goroutines=x heap=2 handled=3"} {
		_, err := parseSample(bad)
		require.Error(t, err, bad)
	}
}

func TestQueueEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	lines := []string{
		`t info "queue added" queue="T@broker-a:0" offset="0"`,
		`t info "queue added" queue="T@broker-a:1" offset="0"`,
		`t info "queue added" queue="%RETRY%g@broker-a:0" offset="0"`,
		`t info "queue added" queue="T2@broker-a:0" offset="0"`,
		`t info "queue dropped: not pulled for too long; recreating it" group="g" queue="T@broker-a:1"`,
		`t info "queue forgotten to start again from the broker's offset" group="g" queue="T@broker-a:0"`,
		`t info "queue dropped: consumer shutting down" group="g" queue="T@broker-a:0"`,
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	added, dropped, err := queueEvents(path, "T")
	require.NoError(t, err)
	require.Equal(t, 2, added)
	require.Equal(t, []string{lines[4], lines[5]}, dropped)
}

// The outage lines, as relconsumer's logger writes internal/client's log calls.
func TestOutageEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	lines := []string{
		`2026-12-02T10:00:00.5Z warn "no name server answers; consuming on the routes already known" nameServers="127.0.0.1:9876" err="x"`,
		`2026-12-02T10:01:00.5Z warn "name servers still unreachable; consuming on the routes already known" for="1m0s"`,
		`2026-12-02T10:01:10.25Z info "a name server answers again; refreshing routes" nameServer="127.0.0.1:9876" after="70s"`,
		`2026-12-02T10:01:10.3Z info "queue added" queue="T@broker-a:0" offset="0"`,
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	st, err := outageEvents(path)
	require.NoError(t, err)
	require.Equal(t, 2, st.warnings)
	require.Equal(t, time.Date(2026, 12, 2, 10, 1, 10, 250e6, time.UTC), st.endAt.UTC())

	require.NoError(t, os.WriteFile(path, []byte(`yesterday info "a name server answers again; refreshing routes"`+"\n"), 0o644))
	_, err = outageEvents(path)
	require.ErrorContains(t, err, "yesterday")
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	require.NoError(t, WriteTable(&b, []Result{
		{Scenario: "A", Title: "kill -9 churn", Messages: 2000, Duplicates: 3, Seconds: 12.34,
			Targets: []Target{{Name: "0 lost", Met: true, Detail: "0 lost"}, {Name: "duplicates ≤ 0.10 %", Detail: "0.15 %"}},
			Notes:   []string{"a note"}},
		{Scenario: "B", Title: "graceful churn", Messages: 10, Targets: []Target{{Name: "0 lost", Met: true}}},
	}))
	out := b.String()
	require.Contains(t, out, "| A. kill -9 churn")
	require.Contains(t, out, "| 3 (0.150 %)")
	require.Contains(t, out, "NOT MET: duplicates ≤ 0.10 %")
	require.Contains(t, out, "all 1 targets met")
	require.Contains(t, out, "  [NOT MET] duplicates ≤ 0.10 %: 0.15 %")
	require.Contains(t, out, "  - a note")
	require.False(t, Result{Targets: []Target{{Met: false}}}.Met())
	require.True(t, Result{}.Met())
	require.Zero(t, Result{}.DuplicatePercent())
}

func TestRunRefusesAnUnknownScenario(t *testing.T) {
	_, err := Run(t.Context(), Config{Dir: t.TempDir()}, "Z")
	require.ErrorContains(t, err, `unknown scenario "Z"`)
	require.Equal(t, []string{"A", "B", "C", "D", "E", "F", "G", "H"}, Scenarios())
}
