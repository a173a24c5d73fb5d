package message

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/klauspost/compress/zstd"
)

// innerMessageCost is what each message unwrapped from an inner batch is charged against
// MaxDecodedSize: its Ext and its pointer.
const innerMessageCost = int(unsafe.Sizeof(Ext{})) + int(unsafe.Sizeof(&Ext{}))

const batchFlags = SysFlagInnerBatch | SysFlagNeedUnwrap

// decodeState is the scratch state of one decode call.
type decodeState struct {
	max      int           // MaxDecodedSize
	left     int           // what is left of it for this body
	zstd     *zstd.Decoder // a nil Decoder's zstd decoder, made for this call
	keep     bool          // expand keeps what it decompresses in inflated (checking pass)
	inflated [][]byte      // decompressed bodies, in record order, kept by a checking pass
	replay   bool          // expand takes bodies from inflated instead of decompressing
	next     int           // the next of inflated to replay
}

// errMiscount would report a bug: more messages than counted. It is checked so that a
// bug shows as an error, not as a panic on network input.
func errMiscount() *fieldError {
	return &fieldError{field: "internal", err: errors.New("internal error: more messages than counted")}
}

// strSpan is where one message's topic and properties come from and, once the shared
// string is written, where they lie in it.
type strSpan struct {
	topic, props       []byte
	wait               string // WAIT for a message of an inner batch
	newTopic           bool   // the topic differs from the previous message's: write it
	topicOff, topicLen int
	propsOff, propsLen int
}

// decode decodes body so that its messages cost three allocations: the Ext values,
// their pointers and one string holding every topic and property.
//
// A first scan hops from record to record by storeSize to count them. When no record is
// an inner batch, that count is the number of messages, and one pass parses, checks,
// decompresses and fills the messages, stopping at the first bad record. Otherwise
// (unwrapping makes the count unknown) a checking pass counts the messages first,
// keeping what it decompressed for the filling pass. Last, the topics and properties
// are copied into one string and every message pointed at its part of it.
//
// With modeOwned (DecodeOwned), topics and properties point into body instead, and a
// copy of the extra properties is their shared tail: three allocations too, and no
// copy of the strings. With modeLent (DecodeLent), they point into one copy of their
// bytes, with the shared tail: four allocations.
func (d *Decoder) decode(body []byte, extra []Property, mode decodeMode) ([]*Ext, error) {
	st := decodeState{max: d.maxDecodedSize()}
	st.left = st.max
	n, inner := scan(body)
	good := len(body)
	var err error
	if inner {
		st.keep = true
		n, good, err = d.check(&st, body)
		st.keep, st.replay = false, true
	}
	if n == 0 {
		if !inner {
			_, err = d.fill(&st, body, nil, nil, nil)
		}
		return nil, err
	}
	exts := make([]Ext, n)
	ptrs := make([]*Ext, n)
	var spanBuf [32]strSpan
	spans := spanBuf[:0]
	if n > len(spanBuf) {
		spans = make([]strSpan, 0, n)
	}
	spans, ferr := d.fill(&st, body[:good], exts, ptrs, spans)
	if ferr != nil {
		err = ferr // after a checking pass, filling cannot fail: this would be a bug
	}
	n = len(spans)
	if mode != modeCopy {
		if mode == modeLent {
			copySpans(spans) // body is only lent: the strings must not point into it
		}
		var tail []Property
		if len(extra) > 0 {
			tail = append(make([]Property, 0, len(extra)), extra...) // extra does not escape
		}
		setOwnedStrings(exts[:n], spans, tail)
		return ptrs[:n:n], err
	}

	// The shared string: topics (once per run of records with the same topic), each
	// message's properties with the extra properties appended.
	strLen := 0
	var prevTopic []byte
	topicOff := 0
	for i := range spans {
		sp := &spans[i]
		if !bytes.Equal(sp.topic, prevTopic) { // an empty first topic needs no bytes
			prevTopic, topicOff, sp.newTopic = sp.topic, strLen, true
			strLen += len(sp.topic)
		}
		sp.topicOff, sp.topicLen = topicOff, len(sp.topic)
		sp.propsOff, sp.propsLen = strLen, joinedLen(sp.props, sp.wait, extra)
		strLen += sp.propsLen
	}
	var sb strings.Builder
	sb.Grow(strLen)
	for i := range spans {
		sp := &spans[i]
		if sp.newTopic {
			sb.Write(sp.topic)
		}
		writeJoined(&sb, sp.props, sp.wait, extra)
	}
	str := sb.String()
	for i := range spans {
		sp := &spans[i]
		exts[i].Topic = str[sp.topicOff : sp.topicOff+sp.topicLen]
		exts[i].Properties = PropertiesFromWire(str[sp.propsOff : sp.propsOff+sp.propsLen])
	}
	return ptrs[:n:n], err
}

// decodeMode is where a decode's topics and properties live.
type decodeMode uint8

const (
	modeCopy  decodeMode = iota // one new string, extra joined into each message's properties
	modeOwned                   // in body, extra a shared tail (DecodeOwned)
	modeLent                    // in one copy of their bytes, extra a shared tail (DecodeLent)
)

// copySpans copies the topics (once per run of records with the same topic) and
// properties the spans point to into one new allocation and points the spans at the
// copy, which nothing changes afterwards.
func copySpans(spans []strSpan) {
	size := 0
	for i := range spans {
		sp := &spans[i]
		if sp.newTopic = i == 0 || !bytes.Equal(sp.topic, spans[i-1].topic); sp.newTopic {
			size += len(sp.topic)
		}
		size += len(sp.props)
	}
	own := make([]byte, 0, size)
	var topic []byte
	for i := range spans {
		sp := &spans[i]
		if sp.newTopic {
			at := len(own)
			own = append(own, sp.topic...)
			topic = own[at:len(own):len(own)]
		}
		sp.topic = topic
		at := len(own)
		own = append(own, sp.props...)
		sp.props = own[at:len(own):len(own)]
	}
}

// setOwnedStrings gives each message the topic and wire-form properties of its span as
// strings pointing into the decoded bytes, and extra (with WAIT first, for the messages
// of an inner batch) as its properties' tail, one tail shared by every message that
// has the same.
func setOwnedStrings(exts []Ext, spans []strSpan, extra []Property) {
	var prevTopic []byte
	topic := ""
	var waitTails [2][]Property // WAIT "true", WAIT "false"
	for i := range spans {
		sp := &spans[i]
		if i == 0 || !bytes.Equal(sp.topic, prevTopic) {
			prevTopic, topic = sp.topic, aliasString(sp.topic)
		}
		tail := extra
		if sp.wait != "" {
			k := 0
			if sp.wait != "true" {
				k = 1
			}
			if waitTails[k] == nil {
				t := make([]Property, 0, 1+len(extra))
				t = append(t, Property{Name: PropertyWaitStoreMsgOK, Value: sp.wait})
				waitTails[k] = append(t, extra...)
			}
			tail = waitTails[k]
		}
		if len(tail) == 0 {
			tail = nil
		}
		exts[i].Topic = topic
		exts[i].Properties = Properties{raw: aliasString(sp.props), pairs: tail}
	}
}

// aliasString returns the bytes of b as a string without copying them: b must never
// change afterwards.
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// scan hops through body by storeSize, as far as the sizes are plausible, and returns
// how many records it found and whether any is flagged as an inner batch.
func scan(body []byte) (n int, inner bool) {
	for off := 0; len(body)-off >= minRecordSize; n++ {
		size := int(int32(binary.BigEndian.Uint32(body[off:])))
		if size < minRecordSize || size > len(body)-off {
			break
		}
		if int32(binary.BigEndian.Uint32(body[off+36:]))&batchFlags == batchFlags {
			inner = true
		}
		off += size
	}
	return n, inner
}

// check is the checking pass for bodies with inner batches: it checks every record up to
// the first bad one, and returns the number of messages they make, where the bad one
// starts (or len(body)) and its error.
func (d *Decoder) check(st *decodeState, body []byte) (n, good int, err error) {
	for good < len(body) {
		rec, fe := parseRecord(body[good:])
		if fe == nil {
			fe = d.expand(st, &rec)
		}
		if fe != nil {
			return n, good, fe.at(good, false)
		}
		if rec.sysFlag&batchFlags == batchFlags {
			c, _, _ := countBatch(rec.body)
			n += c
		} else {
			n++
		}
		good += int(rec.storeSize)
	}
	return n, good, nil
}

// fill parses the records of body into exts (pointed to by ptrs) and their string
// sources into spans, stopping at the first bad record. exts has room for every message
// the records make.
func (d *Decoder) fill(st *decodeState, body []byte, exts []Ext, ptrs []*Ext, spans []strSpan) ([]strSpan, error) {
	i := 0
	for off := 0; off < len(body); {
		rec, fe := parseRecord(body[off:])
		if fe == nil {
			fe = d.expand(st, &rec)
		}
		if fe != nil {
			return spans, fe.at(off, false)
		}
		if rec.sysFlag&batchFlags == batchFlags {
			wait := waitValue(rec.props)
			for eoff, j := 0, int64(0); eoff < len(rec.body); j++ {
				if i == len(exts) {
					return spans, errMiscount().at(off, false)
				}
				e, _ := parseBatchEntry(rec.body[eoff:])
				x := &exts[i]
				x.QueueID = rec.queueID
				x.QueueOffset = rec.queueOffset + j
				x.SysFlag = rec.sysFlag
				x.BornTimestamp = rec.bornTimestamp
				x.BornHost = rec.bornHost
				x.StoreTimestamp = rec.storeTimestamp
				x.StoreHost = rec.storeHost
				x.CommitLogOffset = rec.commitLogOffset
				x.Flag = e.flag
				if len(e.body) > 0 {
					x.Body = e.body
				}
				ptrs[i] = x
				spans = append(spans, strSpan{topic: rec.topic, props: e.props, wait: wait})
				i++
				eoff += int(e.size)
			}
		} else {
			if i == len(exts) {
				return spans, errMiscount().at(off, false)
			}
			x := &exts[i]
			x.StoreSize = rec.storeSize
			x.BodyCRC = rec.bodyCRC
			x.QueueID = rec.queueID
			x.Flag = rec.flag
			x.QueueOffset = rec.queueOffset
			x.CommitLogOffset = rec.commitLogOffset
			x.SysFlag = rec.sysFlag
			x.BornTimestamp = rec.bornTimestamp
			x.BornHost = rec.bornHost
			x.StoreTimestamp = rec.storeTimestamp
			x.StoreHost = rec.storeHost
			x.ReconsumeTimes = rec.reconsumeTimes
			x.PreparedTransactionOffset = rec.preparedTransactionOffset
			if len(rec.body) > 0 {
				x.Body = rec.body
			}
			ptrs[i] = x
			spans = append(spans, strSpan{topic: rec.topic, props: rec.props})
			i++
		}
		off += int(rec.storeSize)
	}
	return spans, nil
}

// expand finishes a parsed record: it checks its bodyCRC when asked, decompresses a
// compressed body (rec.body and rec.sysFlag become the decompressed body and flag) and
// checks an inner batch, all within the size budget. When replaying, the checks were
// made by the checking pass and the decompressed bodies are taken from it.
func (d *Decoder) expand(st *decodeState, rec *record) *fieldError {
	compressed := rec.sysFlag&SysFlagCompressed != 0 && len(rec.body) > 0
	if st.replay {
		if compressed {
			rec.body = st.inflated[st.next]
			rec.sysFlag &^= SysFlagCompressed
			st.next++
		}
		return nil
	}
	if d.verifyBodyCRC() {
		if crc := BodyCRC(rec.body); crc != rec.bodyCRC {
			return failf("bodyCRC", "bodyCRC %d is not the CRC of the stored body (%d)", rec.bodyCRC, crc)
		}
	}
	if compressed {
		out, err := d.inflate(st, CompressionOf(rec.sysFlag), rec.body, st.left)
		if err != nil {
			return &fieldError{field: "body", err: err}
		}
		st.left -= len(out)
		rec.body = out
		rec.sysFlag &^= SysFlagCompressed
		if st.keep {
			st.inflated = append(st.inflated, out)
		}
	}
	if rec.sysFlag&batchFlags == batchFlags {
		n, bad, fe := countBatch(rec.body)
		if fe != nil {
			return &fieldError{field: "inner batch",
				err: fmt.Errorf("inner message at byte %d of the record's body: %w", bad, fe.err)}
		}
		cost := n * innerMessageCost
		if cost > st.left {
			return &fieldError{field: "inner batch",
				err: fmt.Errorf("%d inner messages need %d bytes, more than the %d the size limit leaves: %w",
					n, cost, st.left, ErrSizeLimit)}
		}
		st.left -= cost
	}
	return nil
}

// waitValue returns the WAIT property Java gives the messages of an inner batch:
// Boolean.toString(record.isWaitStoreMsgOK()), i.e. "false" only when the record's WAIT
// is present and not "true" in any case.
func waitValue(props []byte) string {
	v, ok := wireValue(props, PropertyWaitStoreMsgOK)
	if !ok || bytes.EqualFold(v, []byte("true")) {
		return "true"
	}
	return "false"
}

// wireValue is Properties.Get on a wire form held in bytes.
func wireValue(s []byte, name string) (value []byte, found bool) {
	for len(s) > 0 {
		seg := s
		if i := bytes.IndexByte(s, PropertySeparator); i >= 0 {
			seg, s = s[:i], s[i+1:]
		} else {
			s = nil
		}
		if len(seg) < 3 {
			continue
		}
		k := bytes.IndexByte(seg, NameValueSeparator)
		if k <= 0 || k >= len(seg)-1 {
			continue
		}
		if string(seg[:k]) == name {
			value, found = seg[k+1:], true
		}
	}
	return value, found
}

// joinedLen returns the length of a message's properties: the wire form raw, then WAIT
// (when wait is not empty), then the extra pairs, each appended after a 0x02 unless the
// text so far is empty or already ends with one. writeJoined writes them.
func joinedLen[S ~string | ~[]byte](raw S, wait string, extra []Property) int {
	n := len(raw)
	open := n > 0 && raw[n-1] != PropertySeparator
	if wait != "" {
		if open {
			n++
		}
		n += len(PropertyWaitStoreMsgOK) + 1 + len(wait)
		open = true
	}
	for _, kv := range extra {
		if open {
			n++
		}
		n += len(kv.Name) + 1 + len(kv.Value)
		open = true
	}
	return n
}

func writeJoined(sb *strings.Builder, raw []byte, wait string, extra []Property) {
	sb.Write(raw)
	writeTail(sb, len(raw) > 0 && raw[len(raw)-1] != PropertySeparator, wait, extra)
}

// writeTail writes what writeJoined writes after the wire form; open says whether the
// wire form is not empty and does not end with a 0x02.
func writeTail(sb *strings.Builder, open bool, wait string, extra []Property) {
	if wait != "" {
		if open {
			sb.WriteByte(PropertySeparator)
		}
		sb.WriteString(PropertyWaitStoreMsgOK)
		sb.WriteByte(NameValueSeparator)
		sb.WriteString(wait)
		open = true
	}
	for _, kv := range extra {
		if open {
			sb.WriteByte(PropertySeparator)
		}
		sb.WriteString(kv.Name)
		sb.WriteByte(NameValueSeparator)
		sb.WriteString(kv.Value)
		open = true
	}
}
