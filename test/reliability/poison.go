package reliability

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/test/fakebroker"
	"github.com/rmqpush/rmqpush/test/fakebroker/control"
	"github.com/rmqpush/rmqpush/test/reliability/record"
)

// poisonParams size scenario E.
type poisonParams struct {
	messages     int
	consumers    int
	delay        time.Duration
	maxReconsume int
	delayScale   float64 // of the broker's delay levels
	poisonIndex  int
}

func poisonParamsFor(full bool) poisonParams {
	if full { // MaxReconsumeTimes 16 (the default): levels 3 to 18, 10 s to 2 h, at 1 %
		return poisonParams{messages: 50000, consumers: 2, delay: 20 * time.Millisecond, maxReconsume: 16, delayScale: 0.01, poisonIndex: 80}
	}
	// Levels 3, 4, 5 at 10 %: retries after 1 s, 3 s and 6 s.
	return poisonParams{messages: 10000, consumers: 2, delay: 5 * time.Millisecond, maxReconsume: 3, delayScale: 0.1, poisonIndex: 80}
}

// Slack of E's timing checks: a retry may come this much later than its delay level
// (a 30 s route poll, rocketmq-client-go's failure, is far beyond), and no earlier than
// earlyFactor of it.
const (
	retrySlack  = 2 * time.Second
	earlyFactor = 0.9
)

// runE: one message always gets ReconsumeLater. Its retries must come back after their
// delay levels with growing reconsume times (the retry topic's route known from Start,
// with the default 30 s route poll), it must reach the DLQ after MaxReconsumeTimes
// retries, and the committed offset of its queue must not wait for it.
func runE(ctx context.Context, e *env) error {
	p := poisonParamsFor(e.cfg.Full)
	if err := e.startCluster(2, 4, p.delayScale); err != nil {
		return err
	}
	ids, err := e.produce(ctx, p.messages)
	if err != nil {
		return err
	}
	poison := ids[p.poisonIndex]
	e.consumerArgs = []string{"-delay", p.delay.String(), "-poison", poison, "-max-reconsume", strconv.Itoa(p.maxReconsume)}

	// Watch the poison's queue: when did its committed offset pass the poison?
	var passedAt time.Time
	var firstRec record.Record
	e.watch = func(ctx context.Context) error {
		if !passedAt.IsZero() {
			return nil
		}
		if firstRec.ID == "" {
			recs := e.coll.all(poison)
			if len(recs) == 0 {
				return nil
			}
			firstRec = recs[0]
		}
		offs, err := e.cl.offsetsByQueue(ctx, e.group, e.topic)
		if err != nil {
			return err
		}
		if o := offs[queueKey{firstRec.Broker, firstRec.QueueID}]; o.Committed > firstRec.QueueOffset {
			passedAt = time.Now()
		}
		return nil
	}
	var dlq []control.StoredMessage
	inDLQ := func() (bool, error) {
		var err error
		dlq, err = e.cl.Messages(ctx, fakebroker.DLQTopic(e.group), 100)
		return len(dlq) > 0 && !passedAt.IsZero(), err
	}

	if err := e.startConsumers(p.consumers); err != nil {
		return err
	}
	if err := e.waitDone(ctx, len(ids)-1, inDLQ); err != nil {
		return err
	}
	if err := e.finish(ids, poison); err != nil {
		return err
	}
	e.notef("%d consumers, listener %v, MaxReconsumeTimes %d, delay levels × %g, default 30 s route poll",
		p.consumers, p.delay, p.maxReconsume, p.delayScale)
	e.notef("duplicates of the other messages by cause: %v", e.dupCauses(poison))
	recs := e.coll.all(poison)
	retried, err := e.cl.Messages(ctx, fakebroker.RetryTopic(e.group), 1000)
	if err != nil {
		return err
	}
	availableAt := map[int32]time.Time{} // reconsume times → when the retry topic got it
	for _, m := range retried {
		if m.Body == poison {
			availableAt[m.ReconsumeTimes] = time.UnixMilli(m.StoreTimestamp)
		}
	}
	e.checkRetries(recs, availableAt, p)
	e.checkDLQ(recs, dlq, poison)
	if len(recs) > 0 {
		first := recs[0].At
		dlqAt := time.UnixMilli(dlqStoreTime(dlq, poison))
		e.target("the rest of its queue not held back", !passedAt.IsZero() && passedAt.Before(dlqAt),
			"the committed offset of %s passed the poison (offset %d) %v after its first delivery; it reached the DLQ %v after",
			queueKey{recs[0].Broker, recs[0].QueueID}, recs[0].QueueOffset, passedAt.Sub(first).Round(time.Millisecond),
			dlqAt.Sub(first).Round(time.Millisecond))
	}
	return nil
}

// checkRetries checks that the poison came back MaxReconsumeTimes times, with reconsume
// times 1, 2, ..., each after its delay level (3 + reconsume times before it). The
// detail splits each wait into the broker's part (until the retry topic got the message,
// availableAt) and the consumer's (until the listener had it: pulling it, and the
// consume tasks queued before it).
func (e *env) checkRetries(recs []record.Record, availableAt map[int32]time.Time, p poisonParams) {
	levels := fakebroker.DefaultDelayLevels()
	var times []int32
	for _, r := range recs {
		times = append(times, r.ReconsumeTimes)
	}
	growing := len(recs) == p.maxReconsume+1
	for i, r := range recs {
		growing = growing && r.ReconsumeTimes == int32(i) && r.Status == record.StatusLater
	}
	e.target("retries with growing reconsume times", growing,
		"%d deliveries with reconsume times %v (want 0 to %d, each refused)", len(recs), times, p.maxReconsume)
	onTime := len(recs) > 1
	var gaps []string
	for k := 1; k < len(recs); k++ {
		level := 3 + int(recs[k-1].ReconsumeTimes)
		if level > len(levels) {
			level = len(levels)
		}
		want := time.Duration(float64(levels[level-1]) * p.delayScale)
		got := recs[k].At.Sub(recs[k-1].At)
		ok := got >= time.Duration(earlyFactor*float64(want)) && got <= want+retrySlack
		onTime = onTime && ok
		split := ""
		if at, found := availableAt[recs[k].ReconsumeTimes]; found {
			split = fmt.Sprintf(" = broker %v + consumer %v", at.Sub(recs[k-1].At).Round(time.Millisecond),
				recs[k].At.Sub(at).Round(time.Millisecond))
		}
		gaps = append(gaps, fmt.Sprintf("%v%s (level %d: %v)", got.Round(time.Millisecond), split, level, want))
	}
	e.target(fmt.Sprintf("each retry on time (its delay level, at most +%v)", retrySlack), onTime, "retries after %s", strings.Join(gaps, ", "))
}

// checkDLQ checks that the poison, and only it, reached the DLQ soon after its last
// refusal.
func (e *env) checkDLQ(recs []record.Record, dlq []control.StoredMessage, poison string) {
	var bodies []string
	for _, m := range dlq {
		bodies = append(bodies, m.Body)
	}
	ok := len(dlq) == 1 && dlq[0].Body == poison && len(recs) > 0
	detail := fmt.Sprintf("DLQ holds %v", bodies)
	if ok {
		after := time.UnixMilli(dlq[0].StoreTimestamp).Sub(recs[len(recs)-1].At)
		ok = after <= retrySlack
		detail += fmt.Sprintf(", stored %v after the last refusal", after.Round(time.Millisecond))
	}
	e.target("reached the DLQ after MaxReconsumeTimes", ok, "%s", detail)
}

func dlqStoreTime(dlq []control.StoredMessage, body string) int64 {
	for _, m := range dlq {
		if m.Body == body {
			return m.StoreTimestamp
		}
	}
	return 0
}
