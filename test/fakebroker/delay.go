package fakebroker

import (
	"strconv"
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// delayLevel is one level of ScheduleMessageService: a queue of SCHEDULE_TOPIC_XXXX
// (queue id level-1) whose messages are delivered, in order, once each has waited the
// level's delay since it was stored. Messages wait in the commit log, as in 4.9.8, so
// they survive Stop and Start; only the timer is the broker's.
type delayLevel struct {
	level int
	d     time.Duration
	q     *consumeQueue
	next  int64 // queue offset of the next message to deliver (the delayOffset)
	task  *task
}

// armDelay schedules the delivery of the level's next message if there is one and no
// delivery is scheduled. It runs under b.mu.
func (b *Broker) armDelay(dl *delayLevel) {
	if dl.task != nil || dl.next >= dl.q.maxOffset() || !b.ep.isRunning() {
		return
	}
	e := dl.q.entry(dl.next)
	rec := b.log.record(e.pos)
	wait := time.Duration(0)
	if rec != nil {
		due := time.UnixMilli(recordStoreTime(rec)).Add(dl.d)
		wait = time.Until(due)
	}
	gen := b.runGen
	dl.task = b.c.sched.after(wait, func() { b.deliverDelayed(dl, gen) })
}

// deliverDelayed moves every message of the level whose delay has passed to its real
// topic, as DeliverDelayedMessageTimerTask does, and answers the long polls they wake.
func (b *Broker) deliverDelayed(dl *delayLevel, gen uint64) {
	var wake []*heldPull
	b.mu.Lock()
	if gen != b.runGen {
		b.mu.Unlock()
		return // armed by a run that ended
	}
	dl.task = nil
	now := time.Now()
	for dl.next < dl.q.maxOffset() {
		e := dl.q.entry(dl.next)
		rec := b.log.record(e.pos)
		if rec == nil { // cannot happen: the log keeps everything
			dl.next++
			continue
		}
		if time.UnixMilli(recordStoreTime(rec)).Add(dl.d).After(now) {
			break
		}
		dl.next++
		w, ok := b.timeUp(rec)
		if ok {
			wake = append(wake, w...)
		}
	}
	b.armDelay(dl)
	b.mu.Unlock()
	b.answerHeld(wake)
}

// timeUp stores a delayed message in its real topic (ScheduleMessageService.messageTimeup):
// same body, flag, sysFlag, born time and hosts, reconsume times and properties. The
// stored properties are written before DELAY is cleared, so DELAY, REAL_TOPIC and
// REAL_QID stay in them, as on a real broker.
func (b *Broker) timeUp(rec []byte) ([]*heldPull, bool) {
	m, ok := parseRecord(rec)
	if !ok {
		return nil, false
	}
	props := parseJProps(m.props)
	realTopic, _ := props.get(propRealTopic)
	realQID, _ := props.get(propRealQueueID)
	qid, err := strconv.ParseInt(realQID, 10, 32)
	if err != nil || realTopic == "" {
		return nil, false // "messageTimeup execute error, drop it"
	}
	in := &inner{
		topic:     realTopic,
		queueID:   int32(qid),
		body:      m.body,
		flag:      m.flag,
		props:     props,
		propsStr:  props.String(),
		sysFlag:   m.sysFlag,
		bornTs:    m.bornTs,
		bornHost:  m.bornHost,
		storeHost: m.storeHost,
		reconsume: m.reconsumeTimes,
	}
	props.put(message.PropertyWaitStoreMsgOK, "false")
	props.del(propDelay)
	_, wake, err := b.putMessage(in)
	return wake, err == nil
}
