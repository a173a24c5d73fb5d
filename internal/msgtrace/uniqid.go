package msgtrace

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"
)

// IDGen makes unique ids in the layout of Java's MessageClientIDSetter.createUniqID,
// which Java uses for UNIQ_KEY and for a trace's request id: upper-case hex of the
// client's IP (4 bytes, or 16 for IPv6), the process id (2 bytes), a per-generator
// value (4 bytes; Java's class loader hash), then the ms since the start of the
// current month (4 bytes) and a counter (2 bytes).
type IDGen struct {
	prefix  string // hex of IP, pid and the per-generator value
	counter atomic.Uint32
}

// NewIDGen returns a generator for the client at ip (the IPv4 loopback if ip does not
// parse) in process pid; salt tells generators of one process apart.
func NewIDGen(ip string, pid int, salt uint32) *IDGen {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		addr = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	raw := addr.AsSlice()
	raw = binary.BigEndian.AppendUint16(raw, uint16(pid))
	raw = binary.BigEndian.AppendUint32(raw, salt)
	return &IDGen{prefix: strings.ToUpper(hex.EncodeToString(raw))}
}

// Next returns a new id.
func (g *IDGen) Next(now time.Time) string {
	y, m, _ := now.Date()
	monthStart := time.Date(y, m, 1, 0, 0, 0, 0, now.Location())
	var tail [6]byte
	binary.BigEndian.PutUint32(tail[:4], uint32(now.Sub(monthStart).Milliseconds()))
	binary.BigEndian.PutUint16(tail[4:], uint16(g.counter.Add(1)))
	return g.prefix + strings.ToUpper(hex.EncodeToString(tail[:]))
}
