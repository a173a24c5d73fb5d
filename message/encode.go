package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
	"slices"
	"strings"
)

const maxInt32 = 1<<31 - 1

func errorf(format string, args ...any) error {
	return fmt.Errorf("message: "+format, args...)
}

// BodyCRC returns the bodyCRC a broker stores for body (the body as stored, so the
// compressed bytes of a compressed body): its CRC-32 (IEEE) masked to 31 bits, as Java's
// UtilAll.crc32.
func BodyCRC(body []byte) int32 {
	return int32(crc32.ChecksumIEEE(body) & 0x7fffffff)
}

// AppendStoreRecord appends m to dst as one store record, the format of a pull body
// (see DecodeAll), and returns the extended buffer.
//
// The record is written as a broker writes it:
//   - magic v1, or v2 when the topic is longer than 127 bytes;
//   - the IPv6 bits of SysFlag (0x10, 0x20) set from BornHost and StoreHost: an IPv4
//     address takes 4 bytes, any other 16 (an invalid address is written as 0.0.0.0);
//   - storeSize and bodyCRC computed from what is written: m.StoreSize and m.BodyCRC
//     are ignored, so a record can never carry a stale size or checksum;
//   - Body exactly as given. To store a compressed body, compress it with Compress and
//     set SysFlagCompressed and the codec bits (CompressionFlag) yourself;
//   - properties in their wire form: a decoded message's properties byte for byte,
//     changed ones as name 0x01 value 0x02 per pair.
//
// It fails, writing nothing, on a topic longer than MaxTopicLength, properties longer
// than MaxPropertiesLength, a changed property whose name or value is empty or contains
// 0x01 or 0x02, a compressed non-empty body with an unknown codec, an inner-batch flag
// (INNER_BATCH with NEED_UNWRAP) on an uncompressed body that is not a valid client
// batch, or a record larger than an int32 can describe.
func AppendStoreRecord(dst []byte, m *Ext) ([]byte, error) {
	if len(m.Topic) > MaxTopicLength {
		return dst, errorf("topic of %d bytes exceeds the %d-byte maximum", len(m.Topic), MaxTopicLength)
	}
	pl, err := propertiesWireLen(&m.Properties)
	if err != nil {
		return dst, err
	}
	sysFlag := m.SysFlag &^ (SysFlagBornHostV6 | SysFlagStoreHostV6)
	bornLen, storeLen := 8, 8
	if !hostIs4(m.BornHost) {
		sysFlag |= SysFlagBornHostV6
		bornLen = 20
	}
	if !hostIs4(m.StoreHost) {
		sysFlag |= SysFlagStoreHostV6
		storeLen = 20
	}
	compressed := sysFlag&SysFlagCompressed != 0
	if compressed && len(m.Body) > 0 && !CompressionOf(sysFlag).known() {
		return dst, errorf("sysFlag 0x%X: compressed with unknown codec %d", sysFlag, CompressionOf(sysFlag))
	}
	if sysFlag&(SysFlagInnerBatch|SysFlagNeedUnwrap) == SysFlagInnerBatch|SysFlagNeedUnwrap && !compressed {
		if _, bad, fe := countBatch(m.Body); fe != nil {
			return dst, errorf("sysFlag marks an inner batch but the body is not one: entry at byte %d: %v", bad, fe.err)
		}
	}
	topicLenSize := 1
	magic := MagicV1
	if len(m.Topic) > MaxTopicLengthV1 {
		topicLenSize = 2
		magic = MagicV2
	}
	size := int64(4+4+4+4+4+8+8+4+8+bornLen+8+storeLen+4+8+4) + int64(len(m.Body)) +
		int64(topicLenSize+len(m.Topic)) + int64(2+pl)
	if size > maxInt32 {
		return dst, errorf("record of %d bytes exceeds the int32 storeSize", size)
	}

	dst = slices.Grow(dst, int(size))
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(size))
	dst = be.AppendUint32(dst, uint32(magic))
	dst = be.AppendUint32(dst, uint32(BodyCRC(m.Body)))
	dst = be.AppendUint32(dst, uint32(m.QueueID))
	dst = be.AppendUint32(dst, uint32(m.Flag))
	dst = be.AppendUint64(dst, uint64(m.QueueOffset))
	dst = be.AppendUint64(dst, uint64(m.CommitLogOffset))
	dst = be.AppendUint32(dst, uint32(sysFlag))
	dst = be.AppendUint64(dst, uint64(m.BornTimestamp))
	dst = appendHost(dst, m.BornHost)
	dst = be.AppendUint64(dst, uint64(m.StoreTimestamp))
	dst = appendHost(dst, m.StoreHost)
	dst = be.AppendUint32(dst, uint32(m.ReconsumeTimes))
	dst = be.AppendUint64(dst, uint64(m.PreparedTransactionOffset))
	dst = be.AppendUint32(dst, uint32(len(m.Body)))
	dst = append(dst, m.Body...)
	if topicLenSize == 1 {
		dst = append(dst, byte(len(m.Topic)))
	} else {
		dst = be.AppendUint16(dst, uint16(len(m.Topic)))
	}
	dst = append(dst, m.Topic...)
	dst = be.AppendUint16(dst, uint16(pl))
	return appendPropertiesWire(dst, &m.Properties), nil
}

// hostIs4 reports whether h is written as an IPv4 address (4 bytes). An invalid address
// is written as 0.0.0.0.
func hostIs4(h netip.AddrPort) bool {
	a := h.Addr()
	return a.Is4() || !a.IsValid()
}

func appendHost(dst []byte, h netip.AddrPort) []byte {
	a := h.Addr()
	switch {
	case !a.IsValid():
		dst = append(dst, 0, 0, 0, 0)
	case a.Is4():
		ip := a.As4()
		dst = append(dst, ip[:]...)
	default:
		ip := a.As16()
		dst = append(dst, ip[:]...)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(h.Port()))
}

// errBadProperty is wrapped by the errors of properties that would not survive the wire.
var errBadProperty = errors.New("property would not survive the wire")

// propertiesWireLen returns the length of p's wire form, checking that it can be
// written: at most MaxPropertiesLength bytes and, for properties that were changed
// (decoded wire forms are written back untouched), no empty name or value and no 0x01 or
// 0x02 in either.
func propertiesWireLen(p *Properties) (int, error) {
	n := 0
	if !p.edited {
		n = p.wireLen() // the tail's pairs were checked when they were added
	} else {
		for _, kv := range p.pairs {
			if err := checkProperty(kv.Name, kv.Value); err != nil {
				return 0, err
			}
			n += len(kv.Name) + len(kv.Value) + 2
		}
	}
	if n > MaxPropertiesLength {
		return 0, errorf("properties of %d bytes exceed the %d-byte maximum", n, MaxPropertiesLength)
	}
	return n, nil
}

// checkProperty rejects a name or value that the wire form cannot carry: readers skip
// pairs with an empty name or value, and split on 0x01 and 0x02.
func checkProperty(name, value string) error {
	switch {
	case name == "":
		return fmt.Errorf("message: property with value %q has an empty name: %w", value, errBadProperty)
	case value == "":
		return fmt.Errorf("message: property %q has an empty value: %w", name, errBadProperty)
	case strings.ContainsAny(name, "\x01\x02"):
		return fmt.Errorf("message: property name %q contains a separator byte (0x01 or 0x02): %w", name, errBadProperty)
	case strings.ContainsAny(value, "\x01\x02"):
		return fmt.Errorf("message: property %q: value %q contains a separator byte (0x01 or 0x02): %w", name, value, errBadProperty)
	}
	return nil
}

// appendPropertiesWire appends p's wire form; p was checked by propertiesWireLen.
func appendPropertiesWire(dst []byte, p *Properties) []byte {
	if !p.edited {
		if len(p.pairs) == 0 {
			return append(dst, p.raw...)
		}
		return append(dst, p.String()...)
	}
	for _, kv := range p.pairs {
		dst = append(dst, kv.Name...)
		dst = append(dst, NameValueSeparator)
		dst = append(dst, kv.Value...)
		dst = append(dst, PropertySeparator)
	}
	return dst
}
