package fakebroker

import (
	"encoding/binary"
	"net/netip"
	"sort"

	"github.com/rmqpush/rmqpush/message"
)

// The store keeps what a broker's DefaultMessageStore keeps, in memory: a commit log of
// store records (the exact bytes a pull returns) and, per topic queue, a consume queue
// of (commit-log offset, size, tags hash code) entries. Records are encoded once, when
// stored, by message.AppendStoreRecord; a pull copies them into its body as they are.
//
// The commit log is a list of segments. A segment is only ever appended to within its
// capacity, so bytes once written never move or change, and a record never spans two
// segments. Commit-log offsets count bytes from 0 without gaps (a real broker leaves a
// blank at the end of each 1 GiB file; no client can see the difference).
//
// Everything here is guarded by the owning Broker's mutex.

const segmentSize = 4 << 20

// Offsets of fields inside a store record (v1 and v2 share them up to the hosts).
const (
	recStoreSize     = 0
	recMagic         = 4
	recPhysicOffset  = 28
	recSysFlag       = 36
	recBornHost      = 48
	storeTsOffsetV4  = 56 // storeTimestamp when the born host is IPv4
	storeTsOffsetV6  = 68 // storeTimestamp when the born host is IPv6
	minRecordSize    = 84 + 4 + 1 + 2
	queueEntryLimits = 1 << 40 // sanity bound on queue offsets
)

type segment struct {
	base int64
	data []byte
}

type commitLog struct {
	segs    []*segment
	next    int64 // the commit-log offset the next record gets
	segSize int   // 0: segmentSize
}

// append encodes m at the end of the log, setting m.CommitLogOffset first, and returns
// the record's offset and bytes. propsLen is the length of m's properties wire form.
func (cl *commitLog) append(m *message.Ext, propsLen int) (int64, []byte, error) {
	m.CommitLogOffset = cl.next
	// An upper bound of the record's size (IPv6 hosts, 2-byte topic length).
	bound := 112 + len(m.Body) + 2 + len(m.Topic) + 2 + propsLen
	var seg *segment
	if n := len(cl.segs); n > 0 && cap(cl.segs[n-1].data)-len(cl.segs[n-1].data) >= bound {
		seg = cl.segs[n-1]
	} else {
		size := cl.segSize
		if size <= 0 {
			size = segmentSize
		}
		seg = &segment{base: cl.next, data: make([]byte, 0, max(size, bound))}
		cl.segs = append(cl.segs, seg)
	}
	start := len(seg.data)
	out, err := message.AppendStoreRecord(seg.data, m)
	if err != nil {
		return 0, nil, err
	}
	seg.data = out
	cl.next += int64(len(out) - start)
	return m.CommitLogOffset, out[start:len(out):len(out)], nil
}

// record returns the record stored at offset, or nil when no record starts there. A
// record carries its own commit-log offset, which must match.
func (cl *commitLog) record(offset int64) []byte {
	if offset < 0 || offset >= cl.next || len(cl.segs) == 0 {
		return nil
	}
	i := sort.Search(len(cl.segs), func(i int) bool { return cl.segs[i].base > offset }) - 1
	if i < 0 {
		return nil
	}
	seg := cl.segs[i]
	pos := offset - seg.base
	if pos+minRecordSize > int64(len(seg.data)) {
		return nil
	}
	size := int64(int32(binary.BigEndian.Uint32(seg.data[pos:])))
	if size < minRecordSize || pos+size > int64(len(seg.data)) {
		return nil
	}
	rec := seg.data[pos : pos+size : pos+size]
	magic := int32(binary.BigEndian.Uint32(rec[recMagic:]))
	if magic != message.MagicV1 && magic != message.MagicV2 {
		return nil
	}
	if int64(binary.BigEndian.Uint64(rec[recPhysicOffset:])) != offset {
		return nil
	}
	return rec
}

// at returns the size bytes at pos, which a consume-queue unit points to.
func (cl *commitLog) at(pos int64, size int32) []byte {
	i := sort.Search(len(cl.segs), func(i int) bool { return cl.segs[i].base > pos }) - 1
	if i < 0 {
		return nil
	}
	seg := cl.segs[i]
	start := pos - seg.base
	end := start + int64(size)
	if start < 0 || end > int64(len(seg.data)) {
		return nil
	}
	return seg.data[start:end:end]
}

// recordStoreTime reads a record's storeTimestamp.
func recordStoreTime(rec []byte) int64 {
	off := storeTsOffsetV4
	if int32(binary.BigEndian.Uint32(rec[recSysFlag:]))&message.SysFlagBornHostV6 != 0 {
		off = storeTsOffsetV6
	}
	return int64(binary.BigEndian.Uint64(rec[off:]))
}

// rawRecord is a stored record's fields, read without decompressing its body: what
// Java's lookMessageByOffset gives the broker. Body is the body as stored.
type rawRecord struct {
	topic          string
	queueID        int32
	flag           int32
	queueOffset    int64
	offset         int64
	sysFlag        int32
	bornTs         int64
	bornHost       netip.AddrPort
	storeTs        int64
	storeHost      netip.AddrPort
	reconsumeTimes int32
	body           []byte
	props          string
}

// parseRecord reads a record the store wrote (AppendStoreRecord's layout, v1 or v2).
func parseRecord(rec []byte) (rawRecord, bool) {
	var r rawRecord
	be := binary.BigEndian
	if len(rec) < minRecordSize {
		return r, false
	}
	magic := int32(be.Uint32(rec[recMagic:]))
	r.queueID = int32(be.Uint32(rec[12:]))
	r.flag = int32(be.Uint32(rec[16:]))
	r.queueOffset = int64(be.Uint64(rec[20:]))
	r.offset = int64(be.Uint64(rec[recPhysicOffset:]))
	r.sysFlag = int32(be.Uint32(rec[recSysFlag:]))
	r.bornTs = int64(be.Uint64(rec[40:]))
	pos := 48
	host := func(v6 bool) (netip.AddrPort, bool) {
		n := 4
		if v6 {
			n = 16
		}
		if pos+n+4 > len(rec) {
			return netip.AddrPort{}, false
		}
		a, _ := netip.AddrFromSlice(rec[pos : pos+n])
		port := be.Uint32(rec[pos+n:])
		pos += n + 4
		return netip.AddrPortFrom(a, uint16(port)), true
	}
	var ok bool
	if r.bornHost, ok = host(r.sysFlag&message.SysFlagBornHostV6 != 0); !ok || pos+8 > len(rec) {
		return r, false
	}
	r.storeTs = int64(be.Uint64(rec[pos:]))
	pos += 8
	if r.storeHost, ok = host(r.sysFlag&message.SysFlagStoreHostV6 != 0); !ok || pos+16 > len(rec) {
		return r, false
	}
	r.reconsumeTimes = int32(be.Uint32(rec[pos:]))
	pos += 12 // reconsumeTimes, preparedTransactionOffset
	n := int(be.Uint32(rec[pos:]))
	pos += 4
	if n < 0 || n > len(rec)-pos {
		return r, false
	}
	r.body = rec[pos : pos+n : pos+n]
	pos += n
	tl := 0
	switch magic {
	case message.MagicV1:
		if pos+1 > len(rec) {
			return r, false
		}
		tl = int(rec[pos])
		pos++
	case message.MagicV2:
		if pos+2 > len(rec) {
			return r, false
		}
		tl = int(be.Uint16(rec[pos:]))
		pos += 2
	default:
		return r, false
	}
	if pos+tl+2 > len(rec) {
		return r, false
	}
	r.topic = string(rec[pos : pos+tl])
	pos += tl
	pl := int(be.Uint16(rec[pos:]))
	pos += 2
	if pos+pl > len(rec) {
		return r, false
	}
	r.props = string(rec[pos : pos+pl])
	return r, true
}

// cqEntry is one consume-queue unit: where the record is and its tags hash code (0 for a
// message without tags), as Java's 20-byte ConsumeQueue unit.
type cqEntry struct {
	pos  int64
	size int32
	tags int32
}

// consumeQueue is one queue of a topic.
type consumeQueue struct {
	topic   string
	id      int32
	base    int64 // queue offset of entries[0]
	entries []cqEntry
	held    []*heldPull // long polls waiting for a message (longpoll.go)
	lastTs  int64       // storeTimestamp of the last message
}

func (q *consumeQueue) maxOffset() int64 { return q.base + int64(len(q.entries)) }
func (q *consumeQueue) minOffset() int64 { return q.base }

// entry returns the unit at queue offset off, which must be in [min, max).
func (q *consumeQueue) entry(off int64) cqEntry { return q.entries[off-q.base] }

// truncate makes every offset below min unreachable, as the real broker does when it
// deletes expired commit-log files.
func (q *consumeQueue) truncate(min int64) {
	if min <= q.base {
		return
	}
	if min >= q.maxOffset() {
		q.base = q.maxOffset()
		q.entries = nil
		return
	}
	q.entries = append([]cqEntry(nil), q.entries[min-q.base:]...)
	q.base = min
}

// Permission bits of a topic (Java's PermName), for CreateTopic and TopicInfo.
const (
	PermInherit int32 = 0x1 // new topics may be created from it (TBW102)
	PermWrite   int32 = 0x2
	PermRead    int32 = 0x4
)

const (
	permInherit = PermInherit
	permWrite   = PermWrite
	permRead    = PermRead
	permRW      = PermRead | PermWrite
)

// perm2String is Java's PermName.perm2String.
func perm2String(perm int32) string {
	b := []byte("---")
	if perm&permRead != 0 {
		b[0] = 'R'
	}
	if perm&permWrite != 0 {
		b[1] = 'W'
	}
	if perm&permInherit != 0 {
		b[2] = 'X'
	}
	return string(b)
}

// topicConfig is a topic on one broker (Java's TopicConfig) with its queues.
type topicConfig struct {
	name    string
	read    int32
	write   int32
	perm    int32
	sysFlag int32
	order   bool
	queues  []*consumeQueue // max(read, write) of them
}

func newTopicConfig(name string, read, write, perm, sysFlag int32) *topicConfig {
	t := &topicConfig{name: name, read: read, write: write, perm: perm, sysFlag: sysFlag}
	n := max(read, write)
	t.queues = make([]*consumeQueue, n)
	for i := range t.queues {
		t.queues[i] = &consumeQueue{topic: name, id: int32(i)}
	}
	return t
}

// String is Java's TopicConfig.toString, which some error remarks include.
func (t *topicConfig) String() string {
	return "TopicConfig [topicName=" + t.name + ", readQueueNums=" + itoa(int64(t.read)) +
		", writeQueueNums=" + itoa(int64(t.write)) + ", perm=" + perm2String(t.perm) +
		", topicFilterType=SINGLE_TAG, topicSysFlag=" + itoa(int64(t.sysFlag)) +
		", order=" + boolString(t.order) + "]"
}

// queue returns queue id of the topic, or nil.
func (t *topicConfig) queue(id int32) *consumeQueue {
	if id < 0 || int(id) >= len(t.queues) {
		return nil
	}
	return t.queues[id]
}
