package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRoundTrip(t *testing.T) {
	r := Record{ID: "m-42", Broker: "broker-a", QueueID: 3, QueueOffset: 1234567, ReconsumeTimes: 2,
		PID: 4242, At: time.Unix(0, 1700000000123456789), Status: StatusLater}
	require.NoError(t, r.Check())
	line := r.Append(nil)
	require.Equal(t, "m-42 broker-a 3 1234567 2 4242 1700000000123456789 later\n", string(line))
	got, err := Parse(line[:len(line)-1])
	require.NoError(t, err)
	require.Equal(t, r.At.UnixNano(), got.At.UnixNano())
	got.At = r.At
	require.Equal(t, r, got)
}

func TestCheck(t *testing.T) {
	base := Record{ID: "m", Broker: "b", Status: StatusOK}
	tests := []struct {
		name string
		edit func(*Record)
		err  string
	}{
		{"fine", func(*Record) {}, ""},
		{"empty id", func(r *Record) { r.ID = "" }, "id"},
		{"space in id", func(r *Record) { r.ID = "a b" }, "id"},
		{"newline in broker", func(r *Record) { r.Broker = "a\n" }, "broker"},
		{"long id", func(r *Record) { r.ID = strings.Repeat("x", maxLine) }, "longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base
			tt.edit(&r)
			if err := r.Check(); tt.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, line, err string
	}{
		{"too few fields", "m b 1 2 3 4 5", "7 fields"},
		{"bad status", "m b 1 2 3 4 5 maybe", "status"},
		{"bad queue id", "m b x 2 3 4 5 ok", "queueId"},
		{"queue id overflow", "m b 9999999999 2 3 4 5 ok", "queueId"},
		{"bad offset", "m b 1 - 3 4 5 ok", "queueOffset"},
		{"bad time", "m b 1 2 3 4 t ok", "unixNanos"},
		{"too long", strings.Repeat("x", maxLine+1), "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.line))
			require.ErrorContains(t, err, tt.err)
		})
	}
}

func TestParseAllLeavesAnUnfinishedLine(t *testing.T) {
	data := []byte("a b 0 0 0 1 1 ok\nc b 0 1 0 1 2 ok\nd b 0")
	recs, used, err := ParseAll(data)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, len("a b 0 0 0 1 1 ok\nc b 0 1 0 1 2 ok\n"), used)

	_, _, err = ParseAll([]byte(strings.Repeat("x", maxLine+1)))
	require.ErrorContains(t, err, "unterminated")
	recs, used, err = ParseAll([]byte("a b 0 0 0 1 1 ok\nbad\n"))
	require.ErrorContains(t, err, "fields")
	require.Len(t, recs, 1)
	require.Equal(t, len("a b 0 0 0 1 1 ok\n"), used)
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records")
	tail := NewTail(path)
	recs, err := tail.Next()
	require.NoError(t, err, "a file not created yet is empty")
	require.Empty(t, recs)

	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString("a b 0 0 0 1 1 ok\nb b 0")
	require.NoError(t, err)
	recs, err = tail.Next()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, "a", recs[0].ID)

	_, err = f.WriteString(" 1 0 1 2 ok\nc b 0 2 0 1 3 later\n")
	require.NoError(t, err)
	recs, err = tail.Next()
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, "b", recs[0].ID)
	require.Equal(t, StatusLater, recs[1].Status)

	recs, err = tail.Next()
	require.NoError(t, err)
	require.Empty(t, recs)
	require.Equal(t, path, tail.Path())
}
