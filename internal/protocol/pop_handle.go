package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// Properties the POP path puts on a popped message (Java's MessageConst).
const (
	// PropertyPopCK is a popped message's ack handle (ExtraInfo), which the client
	// builds from the POP_MESSAGE answer (the broker's own for a message revived from
	// the POP retry topic).
	PropertyPopCK = "POP_CK"
	// PropertyFirstPopTime is when the message was first popped (ms).
	PropertyFirstPopTime = "1ST_POP_TIME"
)

// Topic marks: what kind of topic a popped message was read from (Java's
// ExtraInfoUtil.getRetry), in ack handles and the offset infos of POP_MESSAGE answers.
const (
	TopicMarkNormal  byte = '0' // the topic itself
	TopicMarkRetry   byte = '1' // the group's POP retry topic, %RETRY%<group>_<topic>
	TopicMarkRetryV2 byte = '2' // the same, as brokers with enableRetryTopicV2 name it: %RETRY%<group>+<topic>
)

// PopRetryTopic returns the POP retry topic of topic and group as a broker with the
// 5.3.3 default (enableRetryTopicV2=false) names it: %RETRY%<group>_<topic>.
func PopRetryTopic(topic, group string) string { return "%RETRY%" + group + "_" + topic }

// PopRetryTopicV2 returns the POP retry topic as brokers with enableRetryTopicV2 name
// it: %RETRY%<group>+<topic>.
func PopRetryTopicV2(topic, group string) string { return "%RETRY%" + group + "+" + topic }

// TopicMark returns the mark of a topic a message was popped from (Java's
// ExtraInfoUtil.getRetry): V2 for a retry topic with a '+', retry for any other
// %RETRY% topic, normal otherwise.
func TopicMark(topic string) byte {
	switch {
	case !strings.HasPrefix(topic, "%RETRY%"):
		return TopicMarkNormal
	case strings.IndexByte(topic, '+') >= 0:
		return TopicMarkRetryV2
	default:
		return TopicMarkRetry
	}
}

// NormalTopic returns the topic a POP retry topic of group stands for (Java's
// KeyBuilder.parseNormalTopic(topic, cid)), or topic itself when it is not one.
func NormalTopic(topic, group string) string {
	prefix := "%RETRY%" + group
	if !strings.HasPrefix(topic, prefix) || len(topic) == len(prefix) {
		return topic
	}
	if sep := topic[len(prefix)]; sep == '_' || sep == '+' {
		return topic[len(prefix)+1:]
	}
	return topic
}

// ExtraInfo is a popped message's ack handle, the POP_CK property, as Java's
// ExtraInfoUtil writes and reads it: eight fields separated by spaces,
//
//	ckQueueOffset popTime invisibleTime reviveQid topicMark brokerName queueId queueOffset
//
// e.g. "0 1796177259844 60000 0 0 broker-a 1 3" (golden p_pop_533). ACK_MESSAGE and
// CHANGE_MESSAGE_INVISIBLETIME carry it as they got it.
type ExtraInfo struct {
	CkQueueOffset int64  // where the pop that delivered the message started on its queue: its checkpoint
	PopTime       int64  // the pop's broker time (ms)
	InvisibleTime int64  // how long the message is invisible from PopTime (ms)
	ReviveQID     int32  // the revive queue holding the checkpoint
	TopicMark     byte   // TopicMarkNormal, TopicMarkRetry or TopicMarkRetryV2
	BrokerName    string // the broker the message was popped from
	QueueID       int32  // its queue (of the topic TopicMark names)
	QueueOffset   int64  // its offset in that queue
}

// String returns the handle as Java writes it.
func (e ExtraInfo) String() string {
	return string(e.AppendTo(make([]byte, 0, 48+len(e.BrokerName))))
}

// AppendTo appends the handle, as String returns it, to b.
func (e ExtraInfo) AppendTo(b []byte) []byte {
	b = strconv.AppendInt(b, e.CkQueueOffset, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.PopTime, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.InvisibleTime, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(e.ReviveQID), 10)
	b = append(b, ' ', e.TopicMark, ' ')
	b = append(b, e.BrokerName...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(e.QueueID), 10)
	b = append(b, ' ')
	return strconv.AppendInt(b, e.QueueOffset, 10)
}

// Deadline returns when the message becomes visible again unless acked (ms).
func (e ExtraInfo) Deadline() int64 { return e.PopTime + e.InvisibleTime }

// RealTopic returns the topic the message was popped from, given the topic it was
// popped for and the group on the wire (Java's ExtraInfoUtil.getRealTopic): acks and
// invisibility changes name it.
func (e ExtraInfo) RealTopic(topic, group string) string {
	switch e.TopicMark {
	case TopicMarkRetry:
		return PopRetryTopic(topic, group)
	case TopicMarkRetryV2:
		return PopRetryTopicV2(topic, group)
	default:
		return topic
	}
}

// ParseExtraInfo reads a handle. Its strings point into s. Fields beyond the eighth are
// ignored, as Java ignores them; fewer fields, or numbers that do not parse, are an
// error naming the field.
func ParseExtraInfo(s string) (ExtraInfo, error) {
	if e, ok := parsePlainExtraInfo(s); ok {
		return e, nil
	}
	return parseExtraInfoFields(s)
}

// parsePlainExtraInfo reads a handle as brokers write it in one pass: every number
// plain digits (at most 18, within its field's bits), a topic mark of 0, 1 or 2, a
// broker name that is not empty. Anything else is not ok, and parseExtraInfoFields
// reads it (or names what is wrong) field by field; when ok, the two agree
// (FuzzParseExtraInfo).
func parsePlainExtraInfo(s string) (e ExtraInfo, ok bool) {
	var end int
	if e.CkQueueOffset, end, ok = plainNumber(s, 0, 64); !ok {
		return e, false
	}
	if e.PopTime, end, ok = plainNumber(s, end+1, 64); !ok {
		return e, false
	}
	if e.InvisibleTime, end, ok = plainNumber(s, end+1, 64); !ok {
		return e, false
	}
	var n int64
	if n, end, ok = plainNumber(s, end+1, 32); !ok {
		return e, false
	}
	e.ReviveQID = int32(n)
	i := end + 1 // the topic mark, a space, the broker name and a space
	if i+2 > len(s) || s[i] < TopicMarkNormal || s[i] > TopicMarkRetryV2 || s[i+1] != ' ' {
		return e, false
	}
	e.TopicMark, i = s[i], i+2
	end = fieldEnd(s, i)
	if end == i || end == len(s) {
		return e, false
	}
	e.BrokerName = s[i:end]
	if n, end, ok = plainNumber(s, end+1, 32); !ok {
		return e, false
	}
	e.QueueID = int32(n)
	e.QueueOffset, _, ok = plainNumber(s, end+1, 64) // not ok when there is no eighth field
	return e, ok
}

// plainNumber reads the field of s at i (up to the next space or the end; i may be
// past the end) as 1 to 18 plain digits below 1<<(bits-1): its value and the field's
// end. ok is false for an empty field, any other byte, more digits, a larger value.
func plainNumber(s string, i, bits int) (n int64, end int, ok bool) {
	start := i
	for ; i < len(s) && s[i] != ' '; i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, 0, false
		}
		n = n*10 + int64(d)
	}
	if i == start || i-start > 18 || (bits < 64 && n >= 1<<(bits-1)) {
		return 0, 0, false
	}
	return n, i, true
}

// fieldEnd returns the index of the first space in s from i, or len(s). A loop: quicker
// than IndexByte for fields this short.
func fieldEnd(s string, i int) int {
	for i < len(s) && s[i] != ' ' {
		i++
	}
	return i
}

// parseExtraInfoFields is ParseExtraInfo field by field, for any handle.
func parseExtraInfoFields(s string) (ExtraInfo, error) {
	var e ExtraInfo
	var f [8]string
	rest := s
	for i := range f {
		if i > 0 && rest == "" {
			return e, fmt.Errorf("protocol: POP_CK %q: %d fields, want 8", truncate(s), i)
		}
		j := fieldEnd(rest, 0)
		f[i], rest = rest[:j], rest[min(j+1, len(rest)):]
	}
	var err error
	num := func(name, field string, bits int) int64 {
		n, perr := parseDecimal(field, bits)
		if perr != nil && err == nil {
			err = fmt.Errorf("protocol: POP_CK %q: %s %q is not a number", truncate(s), name, field)
		}
		return n
	}
	e.CkQueueOffset = num("ckQueueOffset", f[0], 64)
	e.PopTime = num("popTime", f[1], 64)
	e.InvisibleTime = num("invisibleTime", f[2], 64)
	e.ReviveQID = int32(num("reviveQid", f[3], 32))
	if err == nil && (len(f[4]) != 1 || f[4][0] < TopicMarkNormal || f[4][0] > TopicMarkRetryV2) {
		err = fmt.Errorf("protocol: POP_CK %q: topic mark %q is not 0, 1 or 2", truncate(s), f[4])
	}
	if err == nil {
		e.TopicMark = f[4][0]
	}
	e.BrokerName = f[5]
	e.QueueID = int32(num("queueId", f[6], 32))
	e.QueueOffset = num("queueOffset", f[7], 64)
	return e, err
}

// parseDecimal is strconv.ParseInt(f, 10, bits), quicker for what handles hold: up to
// 18 plain digits (a sign, or a value past bits, takes strconv's way).
func parseDecimal(f string, bits int) (int64, error) {
	if n, end, ok := plainNumber(f, 0, bits); ok && end == len(f) {
		return n, nil
	}
	return strconv.ParseInt(f, 10, bits)
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// PopOffsets are the offset infos of a POP_MESSAGE answer: for each queue the pop read
// (a topic mark and a queue id), where it started and the offsets of the messages it
// returned, in the order the broker wrote them. A pop reads each queue at most once.
type PopOffsets []PopQueueOffsets

// PopQueueOffsets is one queue of PopOffsets.
type PopQueueOffsets struct {
	TopicMark   byte
	QueueID     int32
	StartOffset int64   // from startOffsetInfo; -1 when that has no entry for the queue
	Offsets     []int64 // from msgOffsetInfo
}

// Find returns the entry of a queue, or nil.
func (p PopOffsets) Find(mark byte, queueID int32) *PopQueueOffsets {
	if i := p.Index(mark, queueID); i >= 0 {
		return &p[i]
	}
	return nil
}

// Index returns the index of a queue's entry, or -1.
func (p PopOffsets) Index(mark byte, queueID int32) int {
	for i := range p {
		if p[i].TopicMark == mark && p[i].QueueID == queueID {
			return i
		}
	}
	return -1
}

// maxPopOffsets bounds the offsets one answer may list: a pop returns at most 32
// messages, and a broker's answer listing more is refused rather than parsed.
const maxPopOffsets = 1024

// ParsePopOffsets reads the startOffsetInfo and msgOffsetInfo of a POP_MESSAGE answer
// (Java's ExtraInfoUtil.parseStartOffsetInfo and parseMsgOffsetInfo): entries
// "mark queueId value" separated by ';', the msgOffsetInfo values a ','-separated list.
// Both empty is no queue at all. A queue listed twice in either, a bad number or an
// entry without three fields is an error, as in Java.
func ParsePopOffsets(startOffsetInfo, msgOffsetInfo string) (PopOffsets, error) {
	if startOffsetInfo == "" && msgOffsetInfo == "" {
		return nil, nil
	}
	// One allocation for the entries and one for all their offsets, whatever the
	// counts (bounded: the strings are a peer's).
	entries := strings.Count(msgOffsetInfo, ";") + 1
	out := make(PopOffsets, 0, min(entries+strings.Count(startOffsetInfo, ";")+1, 64))
	all := make([]int64, 0, min(entries+strings.Count(msgOffsetInfo, ","), maxPopOffsets))
	total := 0
	err := eachOffsetEntry("msgOffsetInfo", msgOffsetInfo, func(mark byte, qid int32, value string) error {
		if out.Find(mark, qid) != nil {
			return fmt.Errorf("queue %c %d listed twice", mark, qid)
		}
		e := PopQueueOffsets{TopicMark: mark, QueueID: qid, StartOffset: -1}
		if value == "" {
			return fmt.Errorf("queue %c %d has no offsets", mark, qid)
		}
		first := len(all)
		for value != "" {
			f := value
			if i := strings.IndexByte(value, ','); i >= 0 {
				f, value = value[:i], value[i+1:]
			} else {
				value = ""
			}
			n, err := parseDecimal(f, 64)
			if err != nil {
				return fmt.Errorf("offset %q is not a number", truncate(f))
			}
			if total++; total > maxPopOffsets {
				return fmt.Errorf("more than %d offsets", maxPopOffsets)
			}
			all = append(all, n)
		}
		e.Offsets = all[first:len(all):len(all)]
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	seen := 0
	err = eachOffsetEntry("startOffsetInfo", startOffsetInfo, func(mark byte, qid int32, value string) error {
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("start offset %q is not a number", value)
		}
		e := out.Find(mark, qid)
		if e == nil {
			if seen++; seen > maxPopOffsets {
				return fmt.Errorf("more than %d queues", maxPopOffsets)
			}
			out = append(out, PopQueueOffsets{TopicMark: mark, QueueID: qid, StartOffset: -1})
			e = &out[len(out)-1]
		}
		if e.StartOffset >= 0 {
			return fmt.Errorf("queue %c %d listed twice", mark, qid)
		}
		e.StartOffset = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachOffsetEntry calls fn for each "mark queueId value" entry of an offset info.
func eachOffsetEntry(name, info string, fn func(mark byte, queueID int32, value string) error) error {
	for info != "" {
		entry := info
		if i := strings.IndexByte(info, ';'); i >= 0 {
			entry, info = info[:i], info[i+1:]
		} else {
			info = ""
		}
		mark, rest, ok1 := strings.Cut(entry, " ")
		queue, value, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 || strings.IndexByte(value, ' ') >= 0 {
			return fmt.Errorf("protocol: %s entry %q: want 3 fields", name, truncate(entry))
		}
		if len(mark) != 1 || mark[0] < TopicMarkNormal || mark[0] > TopicMarkRetryV2 {
			return fmt.Errorf("protocol: %s entry %q: topic mark %q is not 0, 1 or 2", name, truncate(entry), mark)
		}
		qid, err := strconv.ParseInt(queue, 10, 32)
		if err != nil {
			return fmt.Errorf("protocol: %s entry %q: queue id %q is not a number", name, truncate(entry), queue)
		}
		if err := fn(mark[0], int32(qid), value); err != nil {
			return fmt.Errorf("protocol: %s entry %q: %w", name, truncate(entry), err)
		}
	}
	return nil
}

// AppendStartOffsetInfo appends one queue's entry to a startOffsetInfo as the broker
// writes it (ExtraInfoUtil.buildStartOffsetInfo).
func AppendStartOffsetInfo(b []byte, mark byte, queueID int32, start int64) []byte {
	if len(b) > 0 {
		b = append(b, ';')
	}
	b = append(b, mark, ' ')
	b = strconv.AppendInt(b, int64(queueID), 10)
	b = append(b, ' ')
	return strconv.AppendInt(b, start, 10)
}

// AppendMsgOffsetInfo appends one queue's entry to a msgOffsetInfo as the broker writes
// it (ExtraInfoUtil.buildMsgOffsetInfo).
func AppendMsgOffsetInfo(b []byte, mark byte, queueID int32, offsets []int64) []byte {
	if len(b) > 0 {
		b = append(b, ';')
	}
	b = append(b, mark, ' ')
	b = strconv.AppendInt(b, int64(queueID), 10)
	b = append(b, ' ')
	for i, o := range offsets {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, o, 10)
	}
	return b
}
