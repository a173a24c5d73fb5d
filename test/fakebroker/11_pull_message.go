package fakebroker

import (
	"fmt"
	"math"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// PULL_MESSAGE (11); 4.9.8's PullMessageProcessor with DefaultMessageStore.getMessage.
//
// Supported:
//   - the checks, codes and remarks in 4.9.8's order: TOPIC_NOT_EXIST, NO_PERMISSION on
//     an unreadable topic, SYSTEM_ERROR for a queue id outside the read queues, then the
//     subscription and its filter (filter.go: SUBSCRIPTION_PARSE_FAILED,
//     SUBSCRIPTION_NOT_EXIST, SUBSCRIPTION_NOT_LATEST, FILTER_DATA_NOT_EXIST,
//     FILTER_DATA_NOT_LATEST, SYSTEM_ERROR for SQL92 without WithPropertyFilter);
//   - the store's statuses as remarks and response codes: FOUND (SUCCESS),
//     NO_MESSAGE_IN_QUEUE (PULL_NOT_FOUND at offset 0, else PULL_OFFSET_MOVED),
//     OFFSET_TOO_SMALL and OFFSET_OVERFLOW_BADLY (PULL_OFFSET_MOVED),
//     OFFSET_OVERFLOW_ONE (PULL_NOT_FOUND), NO_MATCHED_MESSAGE (PULL_RETRY_IMMEDIATELY),
//     each with nextBeginOffset, minOffset, maxOffset and suggestWhichBrokerId (always 0:
//     no slaves) and the real corrections of nextBeginOffset;
//   - the batch limits of messages in memory: the first message always, then at most
//     maxMsgNums (a value of 0 or less still gets one), 32 messages and 256 KiB;
//     messages the filter does not match (tags hash code, or SQL92 on the stored
//     properties) are skipped and counted in nextBeginOffset, scanning at most
//     max(800, maxMsgNums) queue units per pull;
//   - long polling (longpoll.go), the commit offset carried by the pull (stored when the
//     commit flag is set, also when the pull is held, but not when a held pull is run
//     again, as in 4.9.8).
//
// Left out: slaves and suggestWhichBrokerId other than 0, class filters,
// messages "in disk" (everything is in memory, so the in-disk limits of 8 messages and
// 64 KiB never apply), the OFFSET_MOVED_EVENT message a real broker stores on
// PULL_OFFSET_MOVED, consume hooks and statistics.

// Transfer limits of messages in memory (MessageStoreConfig).
const (
	maxTransferCount = 32
	maxTransferBytes = 256 << 10
	maxPooledBody    = 1 << 20
)

// Store statuses (GetMessageStatus names, sent as the remark).
const (
	statusFound          = "FOUND"
	statusNoMatched      = "NO_MATCHED_MESSAGE"
	statusNoMessage      = "NO_MESSAGE_IN_QUEUE"
	statusOverflowOne    = "OFFSET_OVERFLOW_ONE"
	statusOverflowBadly  = "OFFSET_OVERFLOW_BADLY"
	statusOffsetTooSmall = "OFFSET_TOO_SMALL"
)

func (b *Broker) pullMessage(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.PullMessageRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	resp, pooled := b.pullInto(sc, req, &h, true, true)
	if pooled == nil {
		return resp
	}
	// Send now, so that the body's buffer can go back to the pool.
	if !req.IsOneway() {
		_ = sc.Respond(resp)
	}
	b.c.bodies.Put(pooled)
	return nil
}

// pull runs a pull and returns its answer with a body of its own, or nil when it was
// held. allowSuspend is false when a held pull runs again.
func (b *Broker) pull(sc conn, req *remoting.Command, h *protocol.PullMessageRequest, allowSuspend bool) *remoting.Command {
	resp, _ := b.pullInto(sc, req, h, allowSuspend, false)
	return resp
}

// pullInto runs a pull. With pool set, a FOUND body is built in a buffer from the pool,
// returned too; the caller puts it back once the response is encoded.
func (b *Broker) pullInto(sc conn, req *remoting.Command, h *protocol.PullMessageRequest, allowSuspend, pool bool) (*remoting.Command, *[]byte) {
	hasSuspend := h.SysFlag&protocol.PullSysFlagSuspend != 0
	hasCommit := h.SysFlag&protocol.PullSysFlagCommitOffset != 0
	hasSub := h.SysFlag&protocol.PullSysFlagSubscription != 0

	b.mu.Lock()
	t := b.topics[h.Topic]
	if t == nil {
		b.mu.Unlock()
		return pullError(req, protocol.ResponseTopicNotExist,
			"topic["+h.Topic+"] not exist, apply first please! "+faqSuffix), nil
	}
	if t.perm&permRead == 0 {
		b.mu.Unlock()
		return pullError(req, protocol.ResponseNoPermission, "the topic["+h.Topic+"] pulling message is forbidden"), nil
	}
	if h.QueueID < 0 || h.QueueID >= t.read {
		b.mu.Unlock()
		return pullError(req, protocol.ResponseSystemError, illegalQueueRemark(sc, h.Topic, h.QueueID, t.read)), nil
	}
	f, refused, remark := b.pullFilter(h, hasSub) // filter.go
	if f == nil {
		b.mu.Unlock()
		return pullError(req, refused, remark), nil
	}

	q := t.queues[h.QueueID]
	var recs [maxTransferCount][]byte
	r := b.getMessage(q, h.QueueOffset, h.MaxMsgNums, f, &recs)
	code := int32(protocol.ResponseSuccess)
	switch r.status {
	case statusNoMessage:
		code = protocol.ResponsePullNotFound
		if h.QueueOffset != 0 {
			code = protocol.ResponsePullOffsetMoved
		}
	case statusNoMatched:
		code = protocol.ResponsePullRetryImmediately
	case statusOverflowBadly, statusOffsetTooSmall:
		code = protocol.ResponsePullOffsetMoved
	case statusOverflowOne:
		code = protocol.ResponsePullNotFound
	}
	var resp *remoting.Command
	var pooled *[]byte
	if code == protocol.ResponsePullNotFound && allowSuspend && hasSuspend &&
		b.hold(sc, req, h, f, q, suspendTime(h.SuspendTimeoutMillis)) {
		// Held: answered later.
	} else {
		resp = newResponse(req, code, r.status)
		hdr := protocol.PullMessageResponse{NextBeginOffset: r.next, MinOffset: r.min, MaxOffset: r.max}
		resp.ExtFields = hdr.Encode()
		if r.n > 0 {
			var body []byte
			if pool && r.bytes <= maxPooledBody {
				pooled = b.c.bodies.Get().(*[]byte)
				body = (*pooled)[:0]
			}
			if cap(body) < r.bytes {
				body = make([]byte, 0, r.bytes)
				if pooled != nil {
					*pooled = body
				}
			}
			for _, rec := range recs[:r.n] {
				body = append(body, rec...)
			}
			resp.Body = body
		}
	}
	if allowSuspend && hasCommit {
		b.commitConsumerOffset(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset, true)
	}
	b.mu.Unlock()
	return resp, pooled
}

// suspendTime is how long a pull may be held: its suspendTimeoutMillis, kept within
// what a time.Duration holds (about 292 years).
func suspendTime(ms int64) time.Duration {
	const maxMillis = math.MaxInt64 / int64(time.Millisecond)
	return time.Duration(min(ms, maxMillis)) * time.Millisecond
}

// pullError is a pull answer before the store is read: ext fields present but empty, as
// 4.9.8's PullMessageResponseHeader with every field null.
func pullError(req *remoting.Command, code int32, remark string) *remoting.Command {
	resp := newResponse(req, code, remark)
	resp.ExtFields = remoting.Fields{}
	return resp
}

// getResult is what DefaultMessageStore.getMessage found.
type getResult struct {
	status         string
	next, min, max int64
	n, bytes       int // records found and their total size
}

// getMessage reads up to 32 records of q from offset that f matches, into recs
// (DefaultMessageStore.getMessage on a master). It runs under b.mu; the records point
// into the commit log.
func (b *Broker) getMessage(q *consumeQueue, offset int64, maxMsgNums int32, f *filter, recs *[maxTransferCount][]byte) getResult {
	r := getResult{min: q.minOffset(), max: q.maxOffset()}
	switch {
	case r.max == 0:
		r.status, r.next = statusNoMessage, 0
	case offset < r.min:
		r.status, r.next = statusOffsetTooSmall, r.min
	case offset == r.max:
		r.status, r.next = statusOverflowOne, offset
	case offset > r.max:
		r.status, r.next = statusOverflowBadly, r.max
	default:
		r.status = statusNoMatched
		// maxFilterMessageCount is max(16000, maxMsgNums*20) bytes of 20-byte units,
		// computed in Java's int arithmetic.
		limit := int64(max(16000, maxMsgNums*20) / 20)
		i := int64(0)
		for ; offset+i < r.max && i < limit; i++ {
			e := q.entry(offset + i)
			if r.n > 0 && (maxMsgNums <= int32(r.n) || r.bytes+int(e.size) > maxTransferBytes || r.n >= maxTransferCount) {
				break // isTheBatchFull
			}
			if !f.matches(e.tags) {
				continue
			}
			rec := b.log.at(e.pos, e.size)
			if rec == nil || !f.matchesRecord(rec) {
				continue
			}
			recs[r.n] = rec
			r.n++
			r.bytes += len(rec)
			r.status = statusFound
		}
		r.next = offset + i
	}
	return r
}

// commitConsumerOffset stores an offset a consumer wrote, with a pull (byPull) or
// UPDATE_CONSUMER_OFFSET, as ConsumerOffsetManager.commitOffset does: no checks, but a
// write that moves the stored offset back is noted (4.9.8 logs a "[NOTIFYME]" warning).
// It runs under b.mu.
func (b *Broker) commitConsumerOffset(group, topic string, queueID int32, offset int64, byPull bool) {
	k := offsetKey{group: group, topic: topic, queue: queueID}
	if stored, ok := b.offsets[k]; ok && offset < stored {
		b.noteRegression(OffsetRegression{Group: group, Topic: topic, QueueID: int(queueID),
			Request: offset, Stored: stored, ByPull: byPull})
	}
	b.commitOffset(group, topic, queueID, offset)
}

// commitOffset stores a consumer offset (ConsumerOffsetManager.commitOffset: no checks).
// It runs under b.mu.
func (b *Broker) commitOffset(group, topic string, queueID int32, offset int64) {
	k := offsetKey{group: group, topic: topic, queue: queueID}
	if _, ok := b.offsets[k]; !ok && len(b.offsets) >= maxOffsetEntries {
		return
	}
	b.offsets[k] = offset
}

// maxOffsetEntries bounds the committed offsets a broker keeps.
const maxOffsetEntries = 1 << 22

// illegalQueueRemark is the broker's remark for a queue id the topic does not have.
func illegalQueueRemark(sc conn, topic string, queueID, readQueues int32) string {
	return fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[/%s]",
		queueID, topic, readQueues, sc.RemoteAddr())
}
