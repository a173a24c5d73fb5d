package msgtrace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
)

// Java's AsyncTraceDispatcher and trace producer constants.
const (
	// batchRecords is how many records one send gathers at most (Java: 100 contexts).
	batchRecords = 100
	// linger is how long the goroutine waits for the next record before it sends what
	// it has (Java polls its queue with a 5 ms timeout).
	linger = 5 * time.Millisecond
	// maxBody is the body size at which a batch is cut (Java: maxMsgSize 128000 less
	// 10000).
	maxBody = 118000
	// compressOver is the body size over which the body is zlib-compressed, as Java's
	// DefaultMQProducer does (compressMsgBodyOverHowmuch 4096).
	compressOver = 4096
	// sendTimeout bounds one trace send (Java: 5 s).
	sendTimeout = 5 * time.Second
	// routeRetry is how long after a failed route lookup of the trace topic the next
	// one waits: batches meanwhile are dropped, not queued.
	routeRetry = time.Second
	// DefaultMaxPending is how many records wait at most to be sent.
	DefaultMaxPending = 2048
)

// Sender is what the dispatcher needs from the client instance.
type Sender interface {
	// WritableQueues returns the writable queues of topic in its latest route.
	WritableQueues(topic string) ([]message.Queue, bool)
	// UpdateTopicRoute fetches topic's route from the name server.
	UpdateTopicRoute(ctx context.Context, topic string) (bool, error)
	// SendEncoded sends msg (SEND_MESSAGE_V2) to queue q with sysFlag.
	SendEncoded(ctx context.Context, producerGroup string, q message.Queue, msg *message.Message, sysFlag int32) (*protocol.SendMessageResponse, error)
}

// Config configures a Dispatcher.
type Config struct {
	Group      string         // the consumer group; the producer group is derived from it as Java does
	Topic      string         // the trace topic; "" means DefaultTopic
	MaxPending int            // records waiting at most; 0 means DefaultMaxPending
	Sender     Sender         // the client instance
	IDs        *IDGen         // makes the trace messages' UNIQ_KEY
	Logger     logging.Logger // nil: no logging
}

// Entry is one encoded record with what Java indexes it by: the traced message's topic
// (records are sent grouped by it) and its msgId and keys (the trace message's KEYS).
type Entry struct {
	Topic string
	MsgID string
	Keys  string // the traced message's KEYS property, as one key (Java adds it whole)
	Data  []byte // the record, separators included
}

// Dispatcher batches trace records and sends them on its own goroutine.
type Dispatcher struct {
	cfg     Config
	group   string // the trace producer group
	ch      chan Entry
	stop    chan struct{}
	done    chan struct{}
	ctx     context.Context // ends the sends in flight when Close gives up
	cancel  context.CancelFunc
	started atomic.Bool

	sent, dropped, failed atomic.Int64 // records

	nextQueue  int
	routeAfter time.Time // no route lookup before this
}

// New returns a Dispatcher; Start launches its goroutine.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Sender == nil || cfg.IDs == nil {
		return nil, errors.New("msgtrace: no Sender or IDGen")
	}
	if cfg.Topic == "" {
		cfg.Topic = DefaultTopic
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.Logger == nil {
		cfg.Logger = logging.Nop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Dispatcher{
		cfg:    cfg,
		group:  ProducerGroup(cfg.Group),
		ch:     make(chan Entry, cfg.MaxPending),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
	}, nil
}

// ProducerGroup is the producer group Java's consumer trace dispatcher sends with
// (TraceConstants.GROUP_NAME_PREFIX, the group, the type and a per-process counter,
// which is 1 for the first traced client of a process).
func ProducerGroup(consumerGroup string) string {
	return "_INNER_TRACE_PRODUCER-" + consumerGroup + "-CONSUME-1"
}

// Start launches the goroutine.
func (d *Dispatcher) Start() {
	if d.started.CompareAndSwap(false, true) {
		go d.run()
	}
}

// Append queues a record without blocking; a record that does not fit is dropped and
// counted. It reports whether the record was queued.
func (d *Dispatcher) Append(e Entry) bool {
	select {
	case d.ch <- e:
		return true
	default:
		d.dropped.Add(1)
		return false
	}
}

// Close sends what is queued, within ctx, and ends the goroutine; records appended
// after Close are dropped.
func (d *Dispatcher) Close(ctx context.Context) {
	if !d.started.Load() {
		d.cancel()
		return
	}
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	select {
	case <-d.done:
	case <-ctx.Done():
		d.cancel() // the send in flight fails; the rest are dropped
		<-d.done
	}
	d.cancel()
}

// Sent, Dropped and Failed count records: sent to the trace topic, dropped because
// the buffer was full, and lost because their send failed.
func (d *Dispatcher) Sent() int64    { return d.sent.Load() }
func (d *Dispatcher) Dropped() int64 { return d.dropped.Load() }
func (d *Dispatcher) Failed() int64  { return d.failed.Load() }

func (d *Dispatcher) run() {
	defer close(d.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	batch := make([]Entry, 0, batchRecords)
	for {
		select {
		case e := <-d.ch:
			batch = append(batch, e)
		case <-d.stop:
			d.drain(batch)
			return
		}
		timer.Reset(linger)
	gather:
		for len(batch) < batchRecords {
			select {
			case e := <-d.ch:
				batch = append(batch, e)
			case <-timer.C:
				break gather
			case <-d.stop:
				timer.Stop()
				d.drain(batch)
				return
			}
		}
		timer.Stop()
		d.flush(batch)
		clear(batch)
		batch = batch[:0]
	}
}

// drain sends batch and whatever is queued, for Close.
func (d *Dispatcher) drain(batch []Entry) {
	for {
		select {
		case e := <-d.ch:
			batch = append(batch, e)
			if len(batch) < batchRecords {
				continue
			}
		default:
		}
		if len(batch) == 0 || d.ctx.Err() != nil {
			d.failed.Add(int64(len(batch) + len(d.ch)))
			return
		}
		d.flush(batch)
		batch = batch[:0]
		if len(d.ch) == 0 {
			return
		}
	}
}

// flush sends batch as Java's AsyncAppenderRequest does: one message per traced
// topic, in the order the topics first appear, each cut at maxBody.
func (d *Dispatcher) flush(batch []Entry) {
	var topics []string
	for _, e := range batch {
		if !contains(topics, e.Topic) {
			topics = append(topics, e.Topic)
		}
	}
	for _, topic := range topics {
		var body []byte
		var keys []string
		n := 0
		for _, e := range batch {
			if e.Topic != topic {
				continue
			}
			body = append(body, e.Data...)
			keys = addKey(addKey(keys, e.MsgID), e.Keys)
			n++
			if len(body) >= maxBody {
				d.send(body, keys, n)
				body, keys, n = nil, nil, 0
			}
		}
		if n > 0 {
			d.send(body, keys, n)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addKey adds k to the key set (Java: a HashSet of msgIds and keys).
func addKey(keys []string, k string) []string {
	if k == "" || contains(keys, k) {
		return keys
	}
	return append(keys, k)
}

// send sends one trace message holding n records.
func (d *Dispatcher) send(body []byte, keys []string, n int) {
	if err := d.trySend(body, keys); err != nil {
		d.failed.Add(int64(n))
		if logging.Enabled(d.cfg.Logger, logging.LevelDebug) {
			d.cfg.Logger.Log(logging.LevelDebug, "message trace not sent; its records are dropped", "topic", d.cfg.Topic,
				"records", n, "err", err)
		}
		return
	}
	d.sent.Add(int64(n))
}

func (d *Dispatcher) trySend(body []byte, keys []string) error {
	q, err := d.queue()
	if err != nil {
		return err
	}
	msg := &message.Message{Topic: d.cfg.Topic}
	msg.Properties.Set(message.PropertyKeys, strings.Join(keys, " "))
	msg.Properties.Set(message.PropertyUniqKey, d.cfg.IDs.Next(time.Now()))
	msg.Properties.Set(message.PropertyWaitStoreMsgOK, "true")
	sysFlag := int32(0)
	if len(body) > compressOver {
		z, err := message.Compress(body, message.CompressionZlibDefault)
		if err != nil {
			return err
		}
		body, sysFlag = z, message.SysFlagCompressed
	}
	msg.Body = body
	ctx, cancel := context.WithTimeout(d.ctx, sendTimeout)
	defer cancel()
	_, err = d.cfg.Sender.SendEncoded(ctx, d.group, q, msg, sysFlag)
	return err
}

// queue picks the next writable queue of the trace topic, round robin, looking the
// route up when it is not known (at most once per routeRetry).
func (d *Dispatcher) queue() (message.Queue, error) {
	qs, ok := d.cfg.Sender.WritableQueues(d.cfg.Topic)
	if !ok || len(qs) == 0 {
		now := time.Now()
		if now.Before(d.routeAfter) {
			return message.Queue{}, fmt.Errorf("msgtrace: trace topic %s has no route yet", d.cfg.Topic)
		}
		ctx, cancel := context.WithTimeout(d.ctx, sendTimeout)
		_, err := d.cfg.Sender.UpdateTopicRoute(ctx, d.cfg.Topic)
		cancel()
		if err == nil {
			qs, ok = d.cfg.Sender.WritableQueues(d.cfg.Topic)
		}
		if !ok || len(qs) == 0 {
			d.routeAfter = now.Add(routeRetry)
			return message.Queue{}, fmt.Errorf("msgtrace: trace topic %s: no writable queue: %w", d.cfg.Topic, err)
		}
	}
	d.nextQueue++
	return qs[d.nextQueue%len(qs)], nil
}
