package remoting

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The ROCKETMQ binary header (serialize type 1), big-endian:
//
//	code int16 | language byte | version int16 | opaque int32 | flag int32 |
//	remark length int32, remark | ext block length int32, (key length int16, key,
//	value length int32, value)*
//
// A remark or ext block of length 0 means none. Strings are raw bytes (UTF-8 by
// convention) and are kept as they are, so a decoded header re-encodes byte for byte.

// rocketMQMinHeader is the size of a header with no remark and no ext fields.
const rocketMQMinHeader = 2 + 1 + 2 + 4 + 4 + 4 + 4

// rocketMQHeaderSize returns the exact size of c's ROCKETMQ header, or an error naming
// the value that cannot be carried.
func rocketMQHeaderSize(c *Command) (int, error) {
	if c.Code < math.MinInt16 || c.Code > math.MaxInt16 {
		return 0, fmt.Errorf("ROCKETMQ header: code %d does not fit in int16 (use the JSON serialization)", c.Code)
	}
	if c.Version < math.MinInt16 || c.Version > math.MaxInt16 {
		return 0, fmt.Errorf("ROCKETMQ header: version %d does not fit in int16", c.Version)
	}
	n := rocketMQMinHeader + len(c.Remark)
	ext := 0
	for _, f := range c.ExtFields {
		if len(f.Key) > math.MaxInt16 {
			return 0, fmt.Errorf("ROCKETMQ header: ext field key of %d bytes is longer than %d", len(f.Key), math.MaxInt16)
		}
		ext += 2 + len(f.Key) + 4 + len(f.Value)
		if ext > math.MaxInt32 {
			return 0, fmt.Errorf("ROCKETMQ header: ext fields longer than %d bytes", math.MaxInt32)
		}
	}
	n += ext
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("ROCKETMQ header: %d bytes is too long", n)
	}
	return n, nil
}

// appendRocketMQHeader appends c's ROCKETMQ header to dst.
func appendRocketMQHeader(dst []byte, c *Command) ([]byte, error) {
	size, err := rocketMQHeaderSize(c)
	if err != nil {
		return dst, err
	}
	ext := size - rocketMQMinHeader - len(c.Remark)
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Code)))
	dst = append(dst, byte(c.Language))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Version)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Opaque))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(ext))
	for _, f := range c.ExtFields {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(f.Key)))
		dst = append(dst, f.Key...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(f.Value)))
		dst = append(dst, f.Value...)
	}
	return dst, nil
}

// decodeRocketMQHeader decodes a ROCKETMQ header into c, whose fields must be zero.
// Every length is checked against the bytes left before anything is sliced. Code and
// version are sign-extended from int16, as Java's getShort does. Bytes after the ext
// block are ignored, as Java ignores them. Ext entries keep their wire order, repeated
// keys included: Java 4.9.8 writes the fields of fast-codec headers (PULL_MESSAGE) twice,
// and keeping both lets the header re-encode byte for byte; Fields.Get returns the last, as
// Java's HashMap does. Strings are substrings of s.
func decodeRocketMQHeader(s string, c *Command) error {
	if len(s) < rocketMQMinHeader {
		return fmt.Errorf("ROCKETMQ header: %d bytes, need at least %d", len(s), rocketMQMinHeader)
	}
	c.Code = int32(int16(be16(s, 0)))
	c.Language = LanguageCode(s[2])
	c.Version = int32(int16(be16(s, 3)))
	c.Opaque = int32(be32(s, 5))
	c.Flag = int32(be32(s, 9))
	p := 13
	remarkLen := int64(int32(be32(s, p)))
	p += 4
	if remarkLen < 0 || remarkLen > int64(len(s)-p-4) {
		return fmt.Errorf("ROCKETMQ header: remark length %d at offset 13 is out of range (%d bytes left)", remarkLen, len(s)-p-4)
	}
	c.Remark = s[p : p+int(remarkLen)]
	p += int(remarkLen)
	extLen := int64(int32(be32(s, p)))
	p += 4
	if extLen < 0 || extLen > int64(len(s)-p) {
		return fmt.Errorf("ROCKETMQ header: ext block length %d at offset %d is out of range (%d bytes left)", extLen, p-4, len(s)-p)
	}
	block := s[p : p+int(extLen)]
	n, err := countRocketMQFields(block, p)
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	fields := make(Fields, 0, n)
	for q := 0; q < len(block); {
		kl := int(be16(block, q))
		key := block[q+2 : q+2+kl]
		q += 2 + kl
		vl := int(be32(block, q))
		fields = append(fields, Field{Key: key, Value: block[q+4 : q+4+vl]})
		q += 4 + vl
	}
	c.ExtFields = fields
	return nil
}

// countRocketMQFields checks every length in the ext block and counts its entries. base
// is the block's offset in the header, for error messages.
func countRocketMQFields(block string, base int) (int, error) {
	n := 0
	for q := 0; q < len(block); n++ {
		if len(block)-q < 2 {
			return 0, fmt.Errorf("ROCKETMQ header: ext field %d at offset %d: key length truncated", n, base+q)
		}
		kl := int(int16(be16(block, q)))
		if kl < 0 || kl > len(block)-q-2 {
			return 0, fmt.Errorf("ROCKETMQ header: ext field %d at offset %d: key length %d is out of range (%d bytes left)", n, base+q, kl, len(block)-q-2)
		}
		q += 2 + kl
		if len(block)-q < 4 {
			return 0, fmt.Errorf("ROCKETMQ header: ext field %d at offset %d: value length truncated", n, base+q)
		}
		vl := int64(int32(be32(block, q)))
		if vl < 0 || vl > int64(len(block)-q-4) {
			return 0, fmt.Errorf("ROCKETMQ header: ext field %d at offset %d: value length %d is out of range (%d bytes left)", n, base+q, vl, len(block)-q-4)
		}
		q += 4 + int(vl)
	}
	return n, nil
}

func be16(s string, i int) uint16 {
	return uint16(s[i])<<8 | uint16(s[i+1])
}

func be32(s string, i int) uint32 {
	return uint32(s[i])<<24 | uint32(s[i+1])<<16 | uint32(s[i+2])<<8 | uint32(s[i+3])
}
