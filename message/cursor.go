package message

import (
	"encoding/binary"
	"net/netip"
)

// cursor reads big-endian fields from one record. Every read checks the bytes left in
// the record first; the first failure sticks (later reads return zero values) and names
// its field, so a caller checks fail once after a group of reads.
type cursor struct {
	b    []byte
	pos  int
	fail *fieldError
}

func (c *cursor) left() int { return len(c.b) - c.pos }

// take returns the next n bytes with their capacity clipped, so appending to them can
// never write into the bytes that follow.
func (c *cursor) take(n int, field string) []byte {
	if c.fail != nil {
		return nil
	}
	if n > c.left() {
		c.fail = failf(field, "%s needs %d bytes, %d left", field, n, c.left())
		return nil
	}
	s := c.b[c.pos : c.pos+n : c.pos+n]
	c.pos += n
	return s
}

func (c *cursor) i16(field string) int16 {
	s := c.take(2, field)
	if s == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(s))
}

func (c *cursor) i32(field string) int32 {
	s := c.take(4, field)
	if s == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(s))
}

func (c *cursor) i64(field string) int64 {
	s := c.take(8, field)
	if s == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(s))
}

// sized returns n bytes announced by a length field named lenField, checking the length
// against the bytes left before slicing.
func (c *cursor) sized(n int, lenField string) []byte {
	if c.fail != nil {
		return nil
	}
	if n < 0 {
		c.fail = failf(lenField, "%s %d is negative", lenField, n)
		return nil
	}
	if n > c.left() {
		c.fail = failf(lenField, "%s %d exceeds the %d bytes left", lenField, n, c.left())
		return nil
	}
	return c.take(n, lenField)
}

// host reads an address (4 bytes, or 16 when v6) and an int32 port.
func (c *cursor) host(v6 bool, field string) netip.AddrPort {
	n := 4
	if v6 {
		n = 16
	}
	s := c.take(n+4, field)
	if s == nil {
		return netip.AddrPort{}
	}
	var addr netip.Addr
	if v6 {
		addr = netip.AddrFrom16([16]byte(s[:16]))
	} else {
		addr = netip.AddrFrom4([4]byte(s[:4]))
	}
	port := int32(binary.BigEndian.Uint32(s[n:]))
	if port < 0 || port > 0xffff {
		c.fail = failf(field, "%s port %d is out of range", field, port)
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(addr, uint16(port))
}
