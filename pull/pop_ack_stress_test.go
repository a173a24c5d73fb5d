package pull

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// ackedBroker answers acks, on other goroutines unless sync is set, failing a fifth of
// the requests, and counts each message acked.
type ackedBroker struct {
	fakeBroker
	sync bool

	mu    sync.Mutex
	acked map[ackedKey]int
}

type ackedKey struct {
	queue  int32
	offset int64
}

var errAckIO = errors.New("connection reset")

func (b *ackedBroker) answer(ok bool, keys []ackedKey, cb func(error)) {
	done := func() {
		if !ok {
			cb(errAckIO)
			return
		}
		b.mu.Lock()
		for _, k := range keys {
			b.acked[k]++
		}
		b.mu.Unlock()
		cb(nil)
	}
	if b.sync {
		done()
		return
	}
	go func() {
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond) // answers out of order
		done()
	}()
}

func (b *ackedBroker) AckAsync(_ string, h *protocol.AckMessageRequest, _ time.Duration, cb func(error)) error {
	b.answer(rand.IntN(5) > 0, []ackedKey{{h.QueueID, h.Offset}}, cb)
	return nil
}

func (b *ackedBroker) BatchAckAsync(_ string, r *protocol.BatchAckRequest, _ time.Duration, cb func(error)) error {
	var keys []ackedKey
	for _, a := range r.Acks {
		for _, off := range a.Offsets() {
			keys = append(keys, ackedKey{a.QueueID, off})
		}
	}
	b.answer(rand.IntN(5) > 0, keys, cb)
	return nil
}

func (b *ackedBroker) ChangeInvisibleTimeAsync(string, *protocol.ChangeInvisibleTimeRequest, time.Duration, func(protocol.ExtraInfo, error)) error {
	return errors.New("not used")
}

func (b *ackedBroker) PopAsync(string, *protocol.PopMessageRequest, time.Duration, remoting.BodySource, func(*client.PopResult, error)) error {
	return errors.New("not used")
}

// Acks from four workers at once, with a fifth of the requests failing and sent again,
// every 97th ack unbatchable (sent alone), answers out of order or on the sender's
// goroutine: each message is acked once or counted failed, never twice and never one
// that was not acked. The acker reuses its batches: one still read after its reuse
// would ack other offsets, or the same ones twice.
func TestPopAckerAcksEachMessageOnce(t *testing.T) {
	for _, onSender := range []bool{false, true} {
		b := &ackedBroker{fakeBroker: *newFakeBroker(), sync: onSender, acked: map[ackedKey]int{}}
		s, err := NewPopService(PopConfig{
			Group: "g", Broker: b, Dispatcher: &popDispatch{},
			Subs:      subs{"t": {Topic: "t", SubString: "*", ExpressionType: "TAG"}},
			Limits:    func(message.Queue) Limits { return Limits{} },
			BatchSize: 32, InvisibleTime: time.Minute, RequestTimeout: time.Second, MaxHold: time.Minute,
			DeadLetter: func(*message.Ext) bool { return true }, Async: func(fn func()) { go fn() },
			AckLinger: time.Millisecond,
		})
		require.NoError(t, err)
		const workers, each = 4, 2000
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					off := int64(1000 + i)
					start := off - int64(i%32) // 32 messages per pop
					if i%97 == 0 {
						start = off + 1 // below its start offset: no bit to set
					}
					h := protocol.ExtraInfo{CkQueueOffset: start, PopTime: int64(1000 + i/32), InvisibleTime: 60000,
						TopicMark: protocol.TopicMarkNormal, BrokerName: "broker-a", QueueID: int32(w), QueueOffset: off}
					s.acks.ack("t", h.String(), false)
				}
			}()
		}
		wg.Wait()
		require.NoError(t, s.Flush(context.Background()))
		b.mu.Lock()
		for k, n := range b.acked {
			require.Equal(t, 1, n, "on sender %v: %+v acked %d times", onSender, k, n)
			require.True(t, k.queue >= 0 && k.queue < workers && k.offset >= 1000 && k.offset < 1000+each, "on sender %v: %+v never acked", onSender, k)
		}
		require.Equal(t, int64(workers*each), int64(len(b.acked))+s.Counters().AckFailed.Load(), "on sender %v", onSender)
		require.NotEmpty(t, s.acks.free, "on sender %v: batches reused", onSender)
		b.mu.Unlock()
	}
}
