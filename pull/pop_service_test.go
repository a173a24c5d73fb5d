package pull

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/remoting"
)

// popCall is one pop the service sent, waiting for the test to answer it.
type popCall struct {
	h        protocol.PopMessageRequest
	bodies   remoting.BodySource // lends the answer's body buffer, or nil
	cb       func(*client.PopResult, error)
	answered bool
}

// popBroker hands pops to the test and records acks and changes, answering them with
// the errors the test sets.
type popBroker struct {
	fakeBroker
	pops chan popCall

	mu        sync.Mutex
	acks      []protocol.AckMessageRequest
	batches   []protocol.BatchAckRequest
	changes   []protocol.ChangeInvisibleTimeRequest
	ackErr    error // returned to single acks
	batchErr  error // returned to batch acks
	changeErr error
	hold      []func() // change callbacks held back by holdChanges
	holding   bool
}

func newPopBroker() *popBroker {
	return &popBroker{fakeBroker: *newFakeBroker(), pops: make(chan popCall, 16)}
}

func (b *popBroker) PopAsync(_ string, h *protocol.PopMessageRequest, _ time.Duration, bodies remoting.BodySource, cb func(*client.PopResult, error)) error {
	b.pops <- popCall{h: *h, bodies: bodies, cb: cb}
	return nil
}

func (b *popBroker) AckAsync(_ string, h *protocol.AckMessageRequest, _ time.Duration, cb func(error)) error {
	b.mu.Lock()
	b.acks = append(b.acks, *h)
	err := b.ackErr
	b.mu.Unlock()
	cb(err)
	return nil
}

func (b *popBroker) BatchAckAsync(_ string, r *protocol.BatchAckRequest, _ time.Duration, cb func(error)) error {
	b.mu.Lock()
	b.batches = append(b.batches, *r)
	err := b.batchErr
	b.mu.Unlock()
	cb(err)
	return nil
}

func (b *popBroker) ChangeInvisibleTimeAsync(_ string, h *protocol.ChangeInvisibleTimeRequest, _ time.Duration, cb func(protocol.ExtraInfo, error)) error {
	b.mu.Lock()
	b.changes = append(b.changes, *h)
	err := b.changeErr
	e, _ := protocol.ParseExtraInfo(h.ExtraInfo)
	e.PopTime, e.InvisibleTime, e.CkQueueOffset = max(time.Now().UnixMilli(), e.PopTime+1), h.InvisibleTime, h.Offset
	answer := func() { cb(e, err) }
	if b.holding {
		b.hold = append(b.hold, answer)
		b.mu.Unlock()
		return nil
	}
	b.mu.Unlock()
	answer()
	return nil
}

// release answers the held changes.
func (b *popBroker) release() {
	b.mu.Lock()
	held := b.hold
	b.hold, b.holding = nil, false
	b.mu.Unlock()
	for _, f := range held {
		f()
	}
}

// ackedOffsets returns the offsets acked, single or batched.
func (b *popBroker) ackedOffsets() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []int64
	for _, a := range b.acks {
		out = append(out, a.Offset)
	}
	for _, r := range b.batches {
		for _, a := range r.Acks {
			out = append(out, a.Offsets()...)
		}
	}
	return out
}

// popDispatch records what a pop dispatched.
type popDispatch struct {
	batches chan *processqueue.PopBatch
}

func (d *popDispatch) DispatchPop(_ *PopRequest, b *processqueue.PopBatch) { d.batches <- b }

type popHarness struct {
	svc    *PopService
	broker *popBroker
	disp   *popDispatch
	req    *PopRequest
	dead   chan *message.Ext
	taken  []*popCall // pops the test took: those it did not answer fail at cleanup
}

func newPopHarness(t *testing.T, edit func(*PopConfig)) *popHarness {
	t.Helper()
	h := &popHarness{broker: newPopBroker(), disp: &popDispatch{batches: make(chan *processqueue.PopBatch, 16)},
		dead: make(chan *message.Ext, 16)}
	cfg := PopConfig{
		Group: "g", Broker: h.broker, Dispatcher: h.disp,
		Subs:      subs{"t": {Topic: "t", SubString: "*", ExpressionType: "TAG"}},
		Limits:    func(message.Queue) Limits { return Limits{Count: 96, SizeMiB: 100} },
		BatchSize: 32, InvisibleTime: time.Minute, PollTime: 15 * time.Second, RequestTimeout: time.Second,
		MaxHold:    time.Minute,
		DeadLetter: func(m *message.Ext) bool { h.dead <- m; return true },
		Async:      func(fn func()) { go fn() },
	}
	if edit != nil {
		edit(&cfg)
	}
	svc, err := NewPopService(cfg)
	require.NoError(t, err)
	h.svc = svc
	h.req = NewPopRequest(message.Queue{Topic: "t", BrokerName: "broker-a", QueueID: -1}, processqueue.NewPopQueue(time.Now()), protocol.InitModeMin, 1)
	svc.Start()
	t.Cleanup(func() {
		svc.Stop()
		require.NoError(t, svc.Flush(context.Background()))
		for _, c := range h.taken { // the pops left unanswered fail, as when the connections close
			if !c.answered {
				c.cb(nil, client.ErrClosed)
			}
		}
		for {
			select {
			case c := <-h.broker.pops:
				c.cb(nil, client.ErrClosed)
				continue
			default:
			}
			break
		}
		svc.Wait()
	})
	return h
}

func (h *popHarness) nextPop(t *testing.T) *popCall {
	t.Helper()
	select {
	case c := <-h.broker.pops:
		pc := &c
		cb := c.cb
		pc.cb = func(res *client.PopResult, err error) {
			pc.answered = true
			cb(res, err)
		}
		h.taken = append(h.taken, pc)
		return pc
	case <-time.After(5 * time.Second):
		t.Fatal("no pop sent")
		return nil
	}
}

// popFound answers c with offsets [from, to) of queue 1, popped at popTime.
func popFound(t *testing.T, c *popCall, from, to int64, tag string) {
	t.Helper()
	var offs []int64
	for o := from; o < to; o++ {
		offs = append(offs, o)
	}
	hdr := protocol.PopMessageResponse{InvisibleTime: c.h.InvisibleTime, PopTime: time.Now().UnixMilli(), ReviveQID: 3,
		StartOffsetInfo: string(protocol.AppendStartOffsetInfo(nil, '0', 1, from)),
		MsgOffsetInfo:   string(protocol.AppendMsgOffsetInfo(nil, '0', 1, offs))}
	records := body(t, "t", from, to, tag)
	if c.bodies != nil { // read into the buffer lent, as the read loop does
		if buf := c.bodies.Body(len(records)); buf != nil {
			records = buf[:copy(buf, records)]
		}
	}
	c.cb(&client.PopResult{Status: client.PopFound, Header: hdr, Body: records}, nil)
}

func TestPopServicePopsDispatchesAndAcksInBatches(t *testing.T) {
	// The linger is long enough that the five Apply calls below fall within it even when a
	// loaded machine preempts the test between them (with 20 ms they could be split).
	h := newPopHarness(t, func(c *PopConfig) { c.AckLinger = 250 * time.Millisecond })
	h.svc.Submit(h.req)
	c := h.nextPop(t)
	require.Equal(t, int32(-1), c.h.QueueID)
	require.Equal(t, "t", c.h.Topic)
	require.Equal(t, int64(60000), c.h.InvisibleTime)
	require.Equal(t, int64(15000), c.h.PollTime)
	require.Equal(t, "*", c.h.Exp)
	require.Equal(t, protocol.InitModeMin, c.h.InitMode)
	popFound(t, c, 0, 5, "")
	b := <-h.disp.batches
	require.Len(t, b.Msgs(), 5)
	require.Equal(t, int64(5), h.req.PQ.Count())
	require.Equal(t, "0 "+strings.Fields(b.Entry(2).Handle)[1]+" 60000 3 0 broker-a 1 2", b.Entry(2).Handle)
	h.nextPop(t) // the next pop goes at once

	for i := range 5 {
		h.svc.Apply(h.req, b, i, processqueue.PopActionAck, 0)
	}
	require.Zero(t, h.req.PQ.Count())
	require.Eventually(t, func() bool { return len(h.broker.ackedOffsets()) == 5 }, 5*time.Second, time.Millisecond)
	h.broker.mu.Lock()
	require.Len(t, h.broker.batches, 1, "one BATCH_ACK_MESSAGE for the five")
	require.Empty(t, h.broker.acks)
	a := h.broker.batches[0].Acks[0]
	h.broker.mu.Unlock()
	require.Equal(t, protocol.BatchAck{ConsumerGroup: "g", Topic: "t", Retry: '0', StartOffset: 0, QueueID: 1, ReviveQueueID: 3,
		PopTime: a.PopTime, InvisibleTime: 60000, Bits: []uint64{0x1f}}, a)
	require.Equal(t, int64(5), h.svc.Counters().Acked.Load())
}

func TestPopServiceFallsBackToSingleAcks(t *testing.T) {
	h := newPopHarness(t, func(c *PopConfig) { c.AckLinger = time.Millisecond })
	h.broker.batchErr = &protocol.BrokerError{Code: protocol.ResponseRequestCodeNotSupported}
	h.svc.Submit(h.req)
	popFound(t, h.nextPop(t), 10, 13, "")
	b := <-h.disp.batches
	for i := range 3 {
		h.svc.Apply(h.req, b, i, processqueue.PopActionAck, 0)
	}
	require.Eventually(t, func() bool {
		h.broker.mu.Lock()
		defer h.broker.mu.Unlock()
		return len(h.broker.acks) == 3
	}, 5*time.Second, time.Millisecond)
	// From then on, single acks at once.
	popFound(t, h.nextPop(t), 13, 14, "")
	b = <-h.disp.batches
	h.svc.Apply(h.req, b, 0, processqueue.PopActionAck, 0)
	h.broker.mu.Lock()
	defer h.broker.mu.Unlock()
	require.Len(t, h.broker.acks, 4)
	require.Len(t, h.broker.batches, 1)
	require.Equal(t, "t", h.broker.acks[3].Topic)
	require.Equal(t, int64(13), h.broker.acks[3].Offset)
}

func TestPopServiceRetryDeadLetterAndFilter(t *testing.T) {
	h := newPopHarness(t, func(c *PopConfig) {
		c.Subs = subs{"t": {Topic: "t", SubString: "a", ExpressionType: "TAG", TagsSet: []string{"a"}}}
	})
	h.svc.Submit(h.req)
	c := h.nextPop(t)
	require.Equal(t, "a", c.h.Exp)
	popFound(t, c, 0, 2, "b") // another tag: acked without a call
	popFound(t, h.nextPop(t), 2, 4, "a")
	b := <-h.disp.batches
	require.Len(t, b.Msgs(), 2)
	require.Equal(t, int64(2), h.svc.Counters().Filtered.Load())

	h.svc.Apply(h.req, b, 0, processqueue.PopActionRetry, 30*time.Second)
	h.svc.Apply(h.req, b, 1, processqueue.PopActionDLQ, time.Hour)
	require.Equal(t, "m3", string((<-h.dead).Body))
	require.Eventually(t, func() bool { return len(h.broker.ackedOffsets()) == 3 }, 5*time.Second, time.Millisecond)
	h.broker.mu.Lock()
	defer h.broker.mu.Unlock()
	require.Len(t, h.broker.changes, 1)
	require.Equal(t, int64(30000), h.broker.changes[0].InvisibleTime)
	require.Equal(t, int64(2), h.broker.changes[0].Offset)
	require.ElementsMatch(t, []int64{0, 1, 3}, h.broker.ackedOffsetsLocked())
}

func (b *popBroker) ackedOffsetsLocked() []int64 {
	var out []int64
	for _, a := range b.acks {
		out = append(out, a.Offset)
	}
	for _, r := range b.batches {
		for _, a := range r.Acks {
			out = append(out, a.Offsets()...)
		}
	}
	return out
}

// A message near the end of its invisible time is extended; a result that comes while
// the extension is in flight waits for it and is applied with the new handle.
func TestPopServiceExtendsAndHoldsResultsForTheNewHandle(t *testing.T) {
	h := newPopHarness(t, func(c *PopConfig) { c.InvisibleTime = time.Second })
	h.svc.Submit(h.req)
	popFound(t, h.nextPop(t), 0, 1, "")
	b := <-h.disp.batches
	first := b.Entry(0).Handle
	// The times Extend is given are taken from the message's deadline, not from the wall
	// clock: a loaded machine may take a good part of the second to get here.
	deadline := b.Entry(0).Deadline
	h.svc.Extend(deadline.Add(-600 * time.Millisecond)) // more than the margin (half of it) left: not due
	require.Zero(t, h.svc.Counters().Extended.Load())
	h.broker.holding = true
	h.svc.Extend(deadline.Add(-300 * time.Millisecond))
	require.Equal(t, int64(1), h.svc.Counters().Extended.Load())
	h.svc.Apply(h.req, b, 0, processqueue.PopActionAck, 0) // waits for the extension
	require.Equal(t, int64(1), h.req.PQ.Count())
	h.broker.release()
	require.Zero(t, h.req.PQ.Count())
	require.Eventually(t, func() bool { return len(h.broker.ackedOffsets()) == 1 }, 5*time.Second, time.Millisecond)
	h.broker.mu.Lock()
	defer h.broker.mu.Unlock()
	require.Len(t, h.broker.changes, 1)
	require.Equal(t, first, h.broker.changes[0].ExtraInfo)
	require.Equal(t, int64(1000), h.broker.changes[0].InvisibleTime)
	acked := h.broker.acks
	if len(acked) == 1 {
		require.NotEqual(t, first, acked[0].ExtraInfo, "acked with the new handle")
	} else {
		require.Len(t, h.broker.batches, 1)
		require.NotEqual(t, strings.Fields(first)[1], h.broker.batches[0].Acks[0].PopTime, "acked with the new handle")
	}
}

// Flow control, a failed pop, POLLING_FULL and not found.
func TestPopServiceFlowControlAndErrors(t *testing.T) {
	h := newPopHarness(t, func(c *PopConfig) {
		c.Limits = func(message.Queue) Limits { return Limits{Count: 2} }
	})
	h.svc.Submit(h.req)
	popFound(t, h.nextPop(t), 0, 3, "")
	<-h.disp.batches
	select {
	case <-h.broker.pops:
		t.Fatal("popped beyond the threshold")
	case <-time.After(200 * time.Millisecond):
	}
	require.Positive(t, h.svc.Pending(), "held back")
	for _, b := range h.req.PQ.Batches() {
		for i := range b.Msgs() {
			h.svc.Apply(h.req, b, i, processqueue.PopActionAck, 0)
		}
	}
	c := h.nextPop(t) // after the flow-control delay
	c.cb(&client.PopResult{Status: client.PopNotFound}, nil)
	c = h.nextPop(t) // at once
	c.cb(nil, &remoting.ConnError{Addr: "x", Err: errors.New("gone")})
	start := time.Now()
	c = h.nextPop(t)
	require.GreaterOrEqual(t, time.Since(start), DelayConnError/2)
	require.Equal(t, int64(1), h.svc.Counters().PopErrors.Load())
	c.cb(&client.PopResult{Status: client.PopPollingFull}, nil)
	require.Equal(t, int64(1), h.svc.Counters().PollingFull.Load())
}

// An answer whose handles cannot be built dispatches nothing.
func TestPopServiceRefusesAnswerWithoutHandles(t *testing.T) {
	h := newPopHarness(t, nil)
	h.svc.Submit(h.req)
	c := h.nextPop(t)
	c.cb(&client.PopResult{Status: client.PopFound, Header: protocol.PopMessageResponse{PopTime: 1, InvisibleTime: 1},
		Body: body(t, "t", 0, 2, "")}, nil)
	h.nextPop(t)
	require.Equal(t, int64(1), h.svc.Counters().BadAnswers.Load())
	require.Empty(t, h.disp.batches)
	require.Zero(t, h.req.PQ.Count())
}

// NOT_FOUND answers that keep coming long before the poll time (a 5.x broker whose
// clock is ahead of the client's by more than the poll time answers each pop at once)
// slow the pops down instead of looping at round-trip speed.
func TestPopServiceEarlyNotFoundBacksOff(t *testing.T) {
	h := newPopHarness(t, nil)
	h.svc.Submit(h.req)
	h.nextPop(t).cb(&client.PopResult{Status: client.PopNotFound}, nil) // the first early one: again at once
	c := h.nextPop(t)
	start := time.Now()
	c.cb(&client.PopResult{Status: client.PopNotFound}, nil)
	h.nextPop(t)
	require.GreaterOrEqual(t, time.Since(start), earlyNotFoundDelay, "the second in a row waits")

	s := &PopService{cfg: PopConfig{PollTime: 15 * time.Second}}
	p := &popPipe{r: h.req}
	var got []time.Duration
	for range 9 {
		got = append(got, s.notFoundDelay(p, time.Millisecond))
	}
	ms := time.Millisecond
	require.Equal(t, []time.Duration{0, 50 * ms, 100 * ms, 200 * ms, 400 * ms, 800 * ms, DelayError, DelayError, DelayError}, got)
	require.Zero(t, s.notFoundDelay(p, 8*time.Second), "held for more than half the poll time: long polling works")
	require.Zero(t, s.notFoundDelay(p, time.Millisecond), "counting starts again")
	require.Equal(t, 50*ms, s.notFoundDelay(p, time.Millisecond))
}

// A record that does not decode ends what is consumed of a pop answer: the records
// before it get their handles and are dispatched; it and those after come back once
// their invisible time is over.
func TestPopServiceBadRecordKeepsWhatDecoded(t *testing.T) {
	h := newPopHarness(t, nil)
	h.svc.Submit(h.req)
	c := h.nextPop(t)
	hdr := protocol.PopMessageResponse{InvisibleTime: c.h.InvisibleTime, PopTime: time.Now().UnixMilli(), ReviveQID: 3,
		StartOffsetInfo: string(protocol.AppendStartOffsetInfo(nil, '0', 1, 0)),
		MsgOffsetInfo:   string(protocol.AppendMsgOffsetInfo(nil, '0', 1, []int64{0, 1, 2, 3}))}
	b := body(t, "t", 0, 2, "")
	b = append(b, 0, 0, 0, 99, 1, 2, 3) // a record cut short, where offsets 2 and 3 were
	c.cb(&client.PopResult{Status: client.PopFound, Header: hdr, Body: b}, nil)
	var batch *processqueue.PopBatch
	select {
	case batch = <-h.disp.batches:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing dispatched")
	}
	require.Len(t, batch.Msgs(), 2)
	for i, m := range batch.Msgs() {
		e, err := protocol.ParseExtraInfo(batch.Entry(i).Handle)
		require.NoError(t, err)
		require.Equal(t, m.QueueOffset, e.QueueOffset, "each message acked by its own offset")
	}
	require.Equal(t, int64(1), h.svc.Counters().BadAnswers.Load())
	require.Equal(t, int64(2), h.svc.Counters().Popped.Load())
}
