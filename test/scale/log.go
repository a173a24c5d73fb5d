package scale

import (
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/logging"
)

// costLog is a consumer's logger that keeps what the library logs, at debug level,
// about its rebalance passes and heartbeats, and drops the rest.
type costLog struct {
	mu         sync.Mutex
	passes     []cost
	heartbeats []cost
}

// cost is one pass or heartbeat: when it ended and what it took.
type cost struct {
	at     time.Time
	took   time.Duration
	queues int // a pass: the queues assigned after it
	bytes  int // a heartbeat: its body
}

func (l *costLog) Level() logging.Level { return logging.LevelDebug }

func (l *costLog) Log(_ logging.Level, msg string, keyvals ...any) {
	var list *[]cost
	switch msg {
	case "rebalance pass done":
		list = &l.passes
	case "heartbeat sent":
		list = &l.heartbeats
	default:
		return
	}
	c := cost{at: time.Now()}
	for i := 0; i+1 < len(keyvals); i += 2 {
		switch v := keyvals[i+1].(type) {
		case time.Duration:
			if keyvals[i] == "took" {
				c.took = v
			}
		case int:
			switch keyvals[i] {
			case "queues":
				c.queues = v
			case "bytes":
				c.bytes = v
			}
		}
	}
	l.mu.Lock()
	*list = append(*list, c)
	l.mu.Unlock()
}

// snapshot returns copies of the lists.
func (l *costLog) snapshot() (passes, heartbeats []cost) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]cost(nil), l.passes...), append([]cost(nil), l.heartbeats...)
}

// since returns the costs that ended at or after t.
func since(cs []cost, t time.Time) []time.Duration {
	var out []time.Duration
	for _, c := range cs {
		if !c.at.Before(t) {
			out = append(out, c.took)
		}
	}
	return out
}
