package benchkit

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
)

// Sink is what a worker's listener reports to. Add counts messages; in latency mode the
// listener also calls Observe for each message body, before Add.
type Sink struct {
	n       int64
	timing  bool
	count   atomic.Int64
	firstAt atomic.Int64 // unix nanoseconds of the first Add
	lastAt  atomic.Int64 // unix nanoseconds of the Add that reached n
	done    chan struct{}
	once    sync.Once

	lat  []int64 // latency mode: consume minus send time, nanoseconds
	next atomic.Int64
}

// NewSink returns a sink that is done after n messages; timing makes it keep up to
// maxSamples latencies.
func NewSink(n int64, timing bool, maxSamples int) *Sink {
	s := &Sink{n: n, timing: timing, done: make(chan struct{})}
	if timing {
		s.lat = make([]int64, maxSamples)
	}
	return s
}

// Timing reports whether listeners must call Observe.
func (s *Sink) Timing() bool { return s.timing }

// Add counts k messages received.
func (s *Sink) Add(k int) {
	now := int64(0)
	if s.firstAt.Load() == 0 {
		now = time.Now().UnixNano()
		s.firstAt.CompareAndSwap(0, now)
	}
	c := s.count.Add(int64(k))
	if c >= s.n && c-int64(k) < s.n {
		if now == 0 {
			now = time.Now().UnixNano()
		}
		s.lastAt.Store(now)
		s.once.Do(func() { close(s.done) })
	}
}

// Done is closed when n messages were counted.
func (s *Sink) Done() <-chan struct{} { return s.done }

// Count returns the messages counted.
func (s *Sink) Count() int64 { return s.count.Load() }

// Observe records the latency of a message whose body EncodeBody wrote, received at
// now (unix nanoseconds). Warm-up messages and other bodies are ignored.
func (s *Sink) Observe(body []byte, now int64) {
	sent, warm, ok := DecodeBody(body)
	if !ok || warm {
		return
	}
	if i := s.next.Add(1) - 1; i < int64(len(s.lat)) {
		s.lat[i] = now - sent
	}
}

// Latencies returns the latencies recorded.
func (s *Sink) Latencies() []int64 {
	n := min(s.next.Load(), int64(len(s.lat)))
	return s.lat[:n]
}

// BodyHeader is the length of what EncodeBody writes.
const BodyHeader = 9

// EncodeBody writes the send time (unix nanoseconds) and the warm-up flag at the start of
// body, which must hold BodyHeader bytes.
func EncodeBody(body []byte, sent int64, warm bool) {
	binary.BigEndian.PutUint64(body, uint64(sent))
	body[8] = 0
	if warm {
		body[8] = 1
	}
}

// DecodeBody reads what EncodeBody wrote.
func DecodeBody(body []byte) (sent int64, warm, ok bool) {
	if len(body) < BodyHeader {
		return 0, false, false
	}
	return int64(binary.BigEndian.Uint64(body)), body[8] == 1, true
}
