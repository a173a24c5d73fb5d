package main

import (
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
)

// lineLogger writes one line per log call: RFC 3339 time with nanoseconds, level,
// quoted message, key=value pairs. The orchestrator greps it ("queue added", "queue
// dropped").
type lineLogger struct {
	level consumer.LogLevel
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
}

func newLineLogger(w io.Writer, level consumer.LogLevel) *lineLogger {
	return &lineLogger{w: w, level: level}
}

// Level implements consumer.Logger.
func (l *lineLogger) Level() consumer.LogLevel { return l.level }

// Log implements consumer.Logger.
func (l *lineLogger) Log(level consumer.LogLevel, msg string, keyvals ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := time.Now().AppendFormat(l.buf[:0], time.RFC3339Nano)
	b = append(b, ' ')
	b = append(b, level.String()...)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, msg)
	for i := 0; i < len(keyvals); i += 2 {
		b = append(b, ' ')
		b = append(b, fmt.Sprint(keyvals[i])...)
		b = append(b, '=')
		if i+1 < len(keyvals) {
			b = strconv.AppendQuote(b, fmt.Sprint(keyvals[i+1]))
		} else {
			b = append(b, `"(missing)"`...)
		}
	}
	b = append(b, '\n')
	l.buf = b
	_, _ = l.w.Write(b)
}
