package message

import (
	"encoding/binary"
	"net/netip"
)

// Magic codes of store records (Java's MessageDecoder.MESSAGE_MAGIC_CODE and _V2). V2
// records have a 2-byte topic length; RocketMQ 5 brokers write them for topics longer
// than 127 bytes.
const (
	MagicV1 int32 = -626843481 // 0xDAA320A7
	MagicV2 int32 = -626843477 // 0xDAA320AB
)

// Limits of the store format.
const (
	// MaxTopicLengthV1 is the longest topic a v1 record can carry (a signed byte).
	MaxTopicLengthV1 = 127
	// MaxTopicLength is the longest topic any record can carry (a signed int16).
	MaxTopicLength = 32767
	// MaxPropertiesLength is the longest properties wire form a record or batch entry can
	// carry (a signed int16).
	MaxPropertiesLength = 32767
)

// minRecordSize is the size of a record with IPv4 hosts, an empty body, an empty topic
// and no properties.
const minRecordSize = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + 1 + 2

// record is one store record as it lies in the body: fixed fields decoded, variable ones
// still slices of the body (the body as stored, i.e. compressed if it was compressed).
type record struct {
	storeSize                 int32
	bodyCRC                   int32
	queueID                   int32
	flag                      int32
	queueOffset               int64
	commitLogOffset           int64
	sysFlag                   int32
	bornTimestamp             int64
	bornHost                  netip.AddrPort
	storeTimestamp            int64
	storeHost                 netip.AddrPort
	reconsumeTimes            int32
	preparedTransactionOffset int64
	body                      []byte
	topic                     []byte
	props                     []byte
}

// parseRecord decodes the record at the start of b (b runs to the end of the body).
// Every length is checked against the bytes left before it is used, and the fields must
// end exactly at storeSize. A well-formed record takes the fast path, which checks
// each length once; anything else is parsed again field by field to name what is wrong.
func parseRecord(b []byte) (record, *fieldError) {
	if len(b) < minRecordSize {
		return parseRecordSlow(b)
	}
	be := binary.BigEndian
	size := int(int32(be.Uint32(b)))
	magic := int32(be.Uint32(b[4:]))
	if size < minRecordSize || size > len(b) || (magic != MagicV1 && magic != MagicV2) {
		return parseRecordSlow(b)
	}
	b = b[:size]
	sysFlag := int32(be.Uint32(b[36:]))
	bornIP, storeIP := 4, 4
	if sysFlag&SysFlagBornHostV6 != 0 {
		bornIP = 16
	}
	if sysFlag&SysFlagStoreHostV6 != 0 {
		storeIP = 16
	}
	storeTsAt := 48 + bornIP + 4
	storeHostAt := storeTsAt + 8
	reconsumeAt := storeHostAt + storeIP + 4
	bodyAt := reconsumeAt + 4 + 8 + 4
	if bodyAt > size {
		return parseRecordSlow(b)
	}
	bodyLen := int(int32(be.Uint32(b[bodyAt-4:])))
	if bodyLen < 0 || bodyLen > size-bodyAt {
		return parseRecordSlow(b)
	}
	bodyEnd := bodyAt + bodyLen
	topicAt := bodyEnd
	var topicLen int
	if magic == MagicV1 {
		if topicAt+1 > size {
			return parseRecordSlow(b)
		}
		topicLen = int(int8(b[topicAt]))
		topicAt++
	} else {
		if topicAt+2 > size {
			return parseRecordSlow(b)
		}
		topicLen = int(int16(be.Uint16(b[topicAt:])))
		topicAt += 2
	}
	if topicLen < 0 || topicLen > size-topicAt-2 {
		return parseRecordSlow(b)
	}
	propsAt := topicAt + topicLen + 2
	propsLen := int(int16(be.Uint16(b[propsAt-2:])))
	bornPort := int32(be.Uint32(b[48+bornIP:]))
	storePort := int32(be.Uint32(b[storeHostAt+storeIP:]))
	if propsLen < 0 || propsAt+propsLen != size || uint32(bornPort) > 0xffff || uint32(storePort) > 0xffff {
		return parseRecordSlow(b)
	}
	return record{
		storeSize:                 int32(size),
		bodyCRC:                   int32(be.Uint32(b[8:])),
		queueID:                   int32(be.Uint32(b[12:])),
		flag:                      int32(be.Uint32(b[16:])),
		queueOffset:               int64(be.Uint64(b[20:])),
		commitLogOffset:           int64(be.Uint64(b[28:])),
		sysFlag:                   sysFlag,
		bornTimestamp:             int64(be.Uint64(b[40:])),
		bornHost:                  netip.AddrPortFrom(addrFrom(b[48:48+bornIP]), uint16(bornPort)),
		storeTimestamp:            int64(be.Uint64(b[storeTsAt:])),
		storeHost:                 netip.AddrPortFrom(addrFrom(b[storeHostAt:storeHostAt+storeIP]), uint16(storePort)),
		reconsumeTimes:            int32(be.Uint32(b[reconsumeAt:])),
		preparedTransactionOffset: int64(be.Uint64(b[reconsumeAt+4:])),
		body:                      b[bodyAt:bodyEnd:bodyEnd],
		topic:                     b[topicAt : topicAt+topicLen : topicAt+topicLen],
		props:                     b[propsAt:size:size],
	}, nil
}

// addrFrom returns the address in ip, 4 or 16 bytes.
func addrFrom(ip []byte) netip.Addr {
	if len(ip) == 4 {
		return netip.AddrFrom4([4]byte(ip))
	}
	return netip.AddrFrom16([16]byte(ip))
}

// parseRecordSlow parses field by field, checking each, to report the first bad one.
func parseRecordSlow(b []byte) (record, *fieldError) {
	var r record
	if len(b) < 4 {
		return r, failf("storeSize", "storeSize needs 4 bytes, %d left", len(b))
	}
	size := int32(binary.BigEndian.Uint32(b))
	if size < minRecordSize {
		return r, failf("storeSize", "storeSize %d is below the %d-byte minimum", size, minRecordSize)
	}
	if int64(size) > int64(len(b)) {
		return r, failf("storeSize", "storeSize %d exceeds the %d bytes left", size, len(b))
	}
	c := cursor{b: b[:size], pos: 4}
	r.storeSize = size
	magic := c.i32("magic")
	if magic != MagicV1 && magic != MagicV2 {
		return r, failf("magic", "magic code 0x%08X is neither v1 (0xDAA320A7) nor v2 (0xDAA320AB)", uint32(magic))
	}
	r.bodyCRC = c.i32("bodyCRC")
	r.queueID = c.i32("queueId")
	r.flag = c.i32("flag")
	r.queueOffset = c.i64("queueOffset")
	r.commitLogOffset = c.i64("commitLogOffset")
	r.sysFlag = c.i32("sysFlag")
	r.bornTimestamp = c.i64("bornTimestamp")
	r.bornHost = c.host(r.sysFlag&SysFlagBornHostV6 != 0, "bornHost")
	r.storeTimestamp = c.i64("storeTimestamp")
	r.storeHost = c.host(r.sysFlag&SysFlagStoreHostV6 != 0, "storeHost")
	r.reconsumeTimes = c.i32("reconsumeTimes")
	r.preparedTransactionOffset = c.i64("preparedTransactionOffset")
	r.body = c.sized(int(c.i32("body length")), "body length")
	var topicLen int
	if magic == MagicV1 {
		s := c.take(1, "topic length")
		if s != nil {
			topicLen = int(int8(s[0]))
		}
	} else {
		topicLen = int(c.i16("topic length"))
	}
	r.topic = c.sized(topicLen, "topic length")
	r.props = c.sized(int(c.i16("properties length")), "properties length")
	if c.fail != nil {
		return r, c.fail
	}
	if c.pos != len(c.b) {
		return r, failf("storeSize", "storeSize %d but the fields end at byte %d", size, c.pos)
	}
	return r, nil
}
