// Package logtest is a Logger for tests that keeps every line it is given.
package logtest

import (
	"fmt"
	"strings"
	"sync"

	"github.com/rmqpush/rmqpush/internal/logging"
)

// Lines keeps the lines logged at its level and above, as "<level> <msg> [k v ...]". It
// is safe for concurrent use.
type Lines struct {
	// Min is the most verbose level kept; the zero value keeps every level.
	Min logging.Level

	mu  sync.Mutex
	got []string
}

// Level implements logging.Logger.
func (l *Lines) Level() logging.Level {
	if l.Min == 0 {
		return logging.LevelDebug
	}
	return l.Min
}

// Log implements logging.Logger.
func (l *Lines) Log(level logging.Level, msg string, kv ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, fmt.Sprint(level, " ", msg, kv))
}

// Lines returns a copy of the lines kept.
func (l *Lines) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// Count returns how many lines contain s.
func (l *Lines) Count(s string) int {
	n := 0
	for _, line := range l.Lines() {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}
