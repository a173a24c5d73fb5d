package message

import (
	"encoding/binary"
	"strings"
)

// The client batch format: the body of SEND_BATCH_MESSAGE (Java's
// MessageDecoder.encodeMessages), and the body of an inner-batch store record. Each
// entry is
//
//	int32 totalSize | int32 magic | int32 bodyCRC | int32 flag |
//	int32 bodyLength, body | int16 propertiesLength, properties
//
// Clients write magic and bodyCRC as 0 and readers ignore them.

// minBatchEntrySize is the size of an entry with an empty body and no properties.
const minBatchEntrySize = 4 + 4 + 4 + 4 + 4 + 2

// batchEntry is one entry as it lies in the body.
type batchEntry struct {
	size  int32
	flag  int32
	body  []byte
	props []byte
}

// parseBatchEntry decodes the entry at the start of b (b runs to the end of the body).
func parseBatchEntry(b []byte) (batchEntry, *fieldError) {
	var e batchEntry
	if len(b) < 4 {
		return e, failf("totalSize", "totalSize needs 4 bytes, %d left", len(b))
	}
	size := int32(binary.BigEndian.Uint32(b))
	if size < minBatchEntrySize {
		return e, failf("totalSize", "totalSize %d is below the %d-byte minimum", size, minBatchEntrySize)
	}
	if int64(size) > int64(len(b)) {
		return e, failf("totalSize", "totalSize %d exceeds the %d bytes left", size, len(b))
	}
	c := cursor{b: b[:size], pos: 12} // magic and bodyCRC are not used
	e.size = size
	e.flag = c.i32("flag")
	e.body = c.sized(int(c.i32("body length")), "body length")
	e.props = c.sized(int(c.i16("properties length")), "properties length")
	if c.fail != nil {
		return e, c.fail
	}
	if c.pos != len(c.b) {
		return e, failf("totalSize", "totalSize %d but the fields end at byte %d", size, c.pos)
	}
	return e, nil
}

// countBatch checks every entry of a client batch body and returns how many there are,
// the offset of the first bad entry and its error.
func countBatch(body []byte) (n, bad int, fe *fieldError) {
	for off := 0; off < len(body); {
		e, fe := parseBatchEntry(body[off:])
		if fe != nil {
			return n, off, fe
		}
		n++
		off += int(e.size)
	}
	return n, len(body), nil
}

// DecodeBatch decodes a client batch body (SEND_BATCH_MESSAGE) into its messages. Their
// Topic is empty (the topic travels in the request header); bodies slice into body with
// their capacity clipped, an empty body is nil, and the properties of all messages share
// one string. On a bad entry it returns the messages before it and a *DecodeError.
func DecodeBatch(body []byte) ([]*Message, error) {
	n, good, fe := countBatch(body)
	var err error
	if fe != nil {
		err = fe.at(good, true)
	}
	if n == 0 {
		return nil, err
	}
	msgs := make([]Message, n)
	ptrs := make([]*Message, n)
	var propsBuf [32][]byte
	props := propsBuf[:0]
	if n > len(propsBuf) {
		props = make([][]byte, 0, n)
	}
	strLen := 0
	for i, off := 0, 0; off < good; i++ {
		e, _ := parseBatchEntry(body[off:])
		msgs[i].Flag = e.flag
		if len(e.body) > 0 {
			msgs[i].Body = e.body
		}
		ptrs[i] = &msgs[i]
		props = append(props, e.props)
		strLen += len(e.props)
		off += int(e.size)
	}
	var sb strings.Builder
	sb.Grow(strLen)
	for _, p := range props {
		sb.Write(p)
	}
	s := sb.String()
	pos := 0
	for i, p := range props {
		msgs[i].Properties = PropertiesFromWire(s[pos : pos+len(p)])
		pos += len(p)
	}
	return ptrs, err
}

// EncodeBatch encodes messages in the client batch format of SEND_BATCH_MESSAGE: flag,
// body and properties of each (Topic is not part of an entry; the request header carries
// it). Magic and bodyCRC are written as 0, as Java and Go clients do. It fails on a
// property that would not survive the wire (see AppendStoreRecord) and on entries larger
// than an int32 can describe.
func EncodeBatch(msgs []*Message) ([]byte, error) {
	total := 0
	for i, m := range msgs {
		pl, err := propertiesWireLen(&m.Properties)
		if err != nil {
			return nil, errorf("batch message %d: %v", i, err)
		}
		size := int64(minBatchEntrySize) + int64(len(m.Body)) + int64(pl)
		if size > maxInt32 {
			return nil, errorf("batch message %d: entry of %d bytes exceeds the int32 totalSize", i, size)
		}
		total += int(size)
	}
	dst := make([]byte, 0, total)
	for _, m := range msgs {
		dst = appendBatchEntry(dst, m)
	}
	return dst, nil
}

// appendBatchEntry appends one entry; m's properties were checked by propertiesWireLen.
func appendBatchEntry(dst []byte, m *Message) []byte {
	pl, _ := propertiesWireLen(&m.Properties)
	size := minBatchEntrySize + len(m.Body) + pl
	dst = binary.BigEndian.AppendUint32(dst, uint32(size))
	dst = binary.BigEndian.AppendUint32(dst, 0) // magic
	dst = binary.BigEndian.AppendUint32(dst, 0) // bodyCRC
	dst = binary.BigEndian.AppendUint32(dst, uint32(m.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(m.Body)))
	dst = append(dst, m.Body...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(pl))
	return appendPropertiesWire(dst, &m.Properties)
}
