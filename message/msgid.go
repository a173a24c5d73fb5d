package message

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
)

const upperHex = "0123456789ABCDEF"

// OffsetMsgID returns the broker-assigned message id for a message stored at
// commitLogOffset on the broker at storeHost: upper-case hex of the address bytes
// (4 for IPv4, 16 for IPv6), the port as an int32 and the offset as an int64.
func OffsetMsgID(storeHost netip.AddrPort, commitLogOffset int64) string {
	var raw [16 + 4 + 8]byte
	n := 0
	switch addr := storeHost.Addr(); {
	case !addr.IsValid():
		n = 4 // no store host (a message built by hand): 0.0.0.0
	case addr.Is4() || addr.Is4In6():
		a := addr.Unmap().As4()
		n += copy(raw[:], a[:])
	default:
		a := addr.As16()
		n += copy(raw[:], a[:])
	}
	binary.BigEndian.PutUint32(raw[n:], uint32(storeHost.Port()))
	n += 4
	binary.BigEndian.PutUint64(raw[n:], uint64(commitLogOffset))
	n += 8
	out := make([]byte, 2*n)
	for i, b := range raw[:n] {
		out[2*i] = upperHex[b>>4]
		out[2*i+1] = upperHex[b&0x0f]
	}
	return string(out)
}

// ParseOffsetMsgID decodes an id made by OffsetMsgID into the store host and the
// commit-log offset. It accepts either case and both the IPv4 (32 hex digits) and IPv6
// (56 hex digits) forms.
func ParseOffsetMsgID(id string) (netip.AddrPort, int64, error) {
	var raw [28]byte
	switch len(id) {
	case 32, 56:
	default:
		return netip.AddrPort{}, 0, fmt.Errorf("message: offset msgId %q has %d hex digits, want 32 (IPv4) or 56 (IPv6)", id, len(id))
	}
	n, err := hex.Decode(raw[:], []byte(id))
	if err != nil {
		return netip.AddrPort{}, 0, fmt.Errorf("message: offset msgId %q: %w", id, err)
	}
	ipLen := n - 12
	var addr netip.Addr
	if ipLen == 4 {
		addr = netip.AddrFrom4([4]byte(raw[:4]))
	} else {
		addr = netip.AddrFrom16([16]byte(raw[:16]))
	}
	port := binary.BigEndian.Uint32(raw[ipLen:])
	if port > 0xffff {
		return netip.AddrPort{}, 0, fmt.Errorf("message: offset msgId %q: port %d out of range", id, port)
	}
	offset := int64(binary.BigEndian.Uint64(raw[ipLen+4:]))
	return netip.AddrPortFrom(addr, uint16(port)), offset, nil
}
