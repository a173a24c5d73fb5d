// Package record is the line format in which the reliability suite's consumer process
// records every message its listener is handed, and the reader the orchestrator tails
// those files with.
//
// One line per message, fields separated by one space:
//
//	<id> <broker> <queueId> <queueOffset> <reconsumeTimes> <pid> <unixNanos> <status>
//
// id is the message body (the suite's unique message id), broker, queueId and
// queueOffset say where the message was pulled from (for a retry: the retry topic's
// queue), status is "ok" (the listener returns ConsumeSuccess) or "later" (it returns
// ReconsumeLater). The line is written with one write(2) before the listener returns,
// so a process killed with SIGKILL loses no line of a message it acknowledged.
package record

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Statuses of a record.
const (
	StatusOK    = "ok"
	StatusLater = "later"
)

// maxLine bounds a record line; a longer one is an error, not an allocation.
const maxLine = 4096

// Record is one message handed to a listener.
type Record struct {
	ID             string
	Broker         string
	QueueID        int32
	QueueOffset    int64
	ReconsumeTimes int32
	PID            int
	At             time.Time
	Status         string
}

// Append appends r's line, newline included, to dst.
func (r Record) Append(dst []byte) []byte {
	dst = append(dst, r.ID...)
	dst = append(dst, ' ')
	dst = append(dst, r.Broker...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(r.QueueID), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, r.QueueOffset, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(r.ReconsumeTimes), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(r.PID), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, r.At.UnixNano(), 10)
	dst = append(dst, ' ')
	dst = append(dst, r.Status...)
	return append(dst, '\n')
}

// Check reports whether r can be written as a line that Parse reads back.
func (r Record) Check() error {
	for _, f := range []struct{ name, v string }{{"id", r.ID}, {"broker", r.Broker}, {"status", r.Status}} {
		if f.v == "" || strings.ContainsAny(f.v, " \n\r\t") {
			return fmt.Errorf("record: %s %q is empty or has white space", f.name, f.v)
		}
	}
	if len(r.ID)+len(r.Broker) > maxLine/2 {
		return fmt.Errorf("record: id and broker are longer than %d bytes", maxLine/2)
	}
	return nil
}

// Parse reads one line (without its newline).
func Parse(line []byte) (Record, error) {
	if len(line) > maxLine {
		return Record{}, fmt.Errorf("record: line of %d bytes, over the %d-byte limit", len(line), maxLine)
	}
	f := bytes.Fields(line)
	if len(f) != 8 {
		return Record{}, fmt.Errorf("record: %d fields in %q, want 8", len(f), line)
	}
	var r Record
	r.ID, r.Broker, r.Status = string(f[0]), string(f[1]), string(f[7])
	if r.Status != StatusOK && r.Status != StatusLater {
		return Record{}, fmt.Errorf("record: status %q in %q is neither %q nor %q", r.Status, line, StatusOK, StatusLater)
	}
	ints := []struct {
		name string
		bits int
		dst  func(int64)
	}{
		{"queueId", 32, func(v int64) { r.QueueID = int32(v) }},
		{"queueOffset", 64, func(v int64) { r.QueueOffset = v }},
		{"reconsumeTimes", 32, func(v int64) { r.ReconsumeTimes = int32(v) }},
		{"pid", 32, func(v int64) { r.PID = int(v) }},
		{"unixNanos", 64, func(v int64) { r.At = time.Unix(0, v) }},
	}
	for i, in := range ints {
		v, err := strconv.ParseInt(string(f[2+i]), 10, in.bits)
		if err != nil {
			return Record{}, fmt.Errorf("record: %s in %q: %w", in.name, line, err)
		}
		in.dst(v)
	}
	return r, nil
}

// ParseAll reads every complete line of data. It returns the records, how many bytes
// it consumed (an unterminated last line is left for later: its writer may not have
// finished it), and the first bad line's error.
func ParseAll(data []byte) ([]Record, int, error) {
	var out []Record
	used := 0
	for {
		i := bytes.IndexByte(data[used:], '\n')
		if i < 0 {
			if len(data)-used > maxLine {
				return out, used, errors.New("record: unterminated line over the length limit")
			}
			return out, used, nil
		}
		r, err := Parse(data[used : used+i])
		if err != nil {
			return out, used, err
		}
		out = append(out, r)
		used += i + 1
	}
}
