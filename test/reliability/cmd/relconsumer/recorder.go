package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/reliability/record"
)

// recorder appends a record line per message handed to the listener.
type recorder struct {
	pid     int
	poison  string
	handled atomic.Int64

	mu       sync.Mutex // serialises writes; guards buf and firstErr
	f        *os.File
	buf      []byte
	firstErr error
}

func openRecorder(path string, pid int, poison string) (*recorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &recorder{pid: pid, poison: poison, f: f}, nil
}

func (r *recorder) close() error { return r.f.Close() }

// err returns the first write error.
func (r *recorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.firstErr
}

// listener returns the listener: work for delay, record, return. A batch that includes
// the poison message is refused as a whole (ReconsumeLater), as an application would.
func (r *recorder) listener(delay time.Duration) func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
	return func(ctx context.Context, msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		if delay > 0 {
			t := time.NewTimer(delay * time.Duration(len(msgs)))
			select {
			case <-t.C:
			case <-ctx.Done(): // Shutdown gave up on the listeners: consume nothing
				t.Stop()
				return consumer.ReconsumeLater
			}
		}
		status := consumer.ConsumeSuccess
		for _, m := range msgs {
			if r.poison != "" && string(m.Body) == r.poison {
				status = consumer.ReconsumeLater
			}
		}
		st := record.StatusOK
		if status != consumer.ConsumeSuccess {
			st = record.StatusLater
		}
		if err := r.write(msgs, cc.Queue.BrokerName, st); err != nil {
			// Not recorded, so not consumed: the message must come back.
			return consumer.ReconsumeLater
		}
		return status
	}
}

// write appends the messages' lines with one write(2).
func (r *recorder) write(msgs []*message.Ext, broker, status string) error {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = r.buf[:0]
	for _, m := range msgs {
		b := m.BrokerName
		if b == "" {
			b = broker
		}
		rec := record.Record{ID: string(m.Body), Broker: b, QueueID: m.QueueID, QueueOffset: m.QueueOffset,
			ReconsumeTimes: m.ReconsumeTimes, PID: r.pid, At: now, Status: status}
		if err := rec.Check(); err != nil {
			return r.fail(fmt.Errorf("message at offset %d of %s: %w", m.QueueOffset, m.Queue(), err))
		}
		r.buf = rec.Append(r.buf)
	}
	if _, err := r.f.Write(r.buf); err != nil {
		return r.fail(err)
	}
	r.handled.Add(int64(len(msgs)))
	return nil
}

func (r *recorder) fail(err error) error {
	if r.firstErr == nil {
		r.firstErr = err
		fmt.Fprintln(os.Stderr, "relconsumer: recording failed:", err)
	}
	return err
}
