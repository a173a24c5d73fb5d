package message

import (
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// DefaultMaxDecodedSize is the MaxDecodedSize of a Decoder that sets none: 64 MiB.
const DefaultMaxDecodedSize = 64 << 20

// Decoder decodes store-format bodies (see DecodeAll). The zero value is ready to use
// with the defaults; set the fields before the first use. A Decoder is safe for
// concurrent use and must not be copied after first use: it keeps a zstd decoder and
// pools of zlib and LZ4 readers for reuse across calls. A nil *Decoder decodes with the
// defaults and reuses nothing.
type Decoder struct {
	// MaxDecodedSize bounds what decoding one body may produce beyond the body itself:
	// the sum of its decompressed bodies, plus about 256 bytes (an Ext) for every message
	// unwrapped from an inner batch. A body that needs more fails at the record that
	// crosses the limit, with a DecodeError wrapping ErrSizeLimit. Decompression stops
	// as soon as its output passes the limit, so a zip bomb costs about this much memory
	// (a growing output buffer may briefly take up to twice as much, and an LZ4 frame
	// also uses one block buffer of up to 4 MiB). Zero or less means
	// DefaultMaxDecodedSize.
	MaxDecodedSize int

	// VerifyBodyCRC makes a record whose bodyCRC is not the CRC of its stored body an
	// error (field "bodyCRC"). Java clients do not check it by default; neither do we.
	VerifyBodyCRC bool

	zstd     atomic.Pointer[zstd.Decoder]
	zlibPool sync.Pool // of *zlibReader
	lz4Pool  sync.Pool // of *lz4Reader
}

// DecodeAll decodes a body of zero or more store records, as in a PULL_MESSAGE response
// (also CONSUME_MESSAGE_DIRECTLY, VIEW_MESSAGE_BY_ID and QUERY_MESSAGE bodies), with the
// default options of a zero Decoder. See (*Decoder).DecodeAll.
func DecodeAll(body []byte) ([]*Ext, error) {
	return (*Decoder)(nil).decode(body, nil, modeCopy)
}

// DecodeAll decodes a body of zero or more store records back to back, following Java's
// MessageDecoder.decodesBatch and, for inner batches, PullAPIWrapper.processPullResult:
//
//   - magic v1 (1-byte topic length) and v2 (2-byte topic length); any other magic is an
//     error;
//   - born and store hosts of 4 or 16 address bytes by sysFlag 0x10 and 0x20;
//   - a compressed body (sysFlag 0x1) is decompressed with the codec of sysFlag bits
//     8-10 (0 and 3 zlib, 1 LZ4 frame, 2 zstd) and the COMPRESSED bit is cleared from
//     SysFlag; an empty compressed body is left as it is, flag and all, as Java does; a
//     body that does not decompress is an error, never a compressed Body;
//   - a record flagged INNER_BATCH and NEED_UNWRAP holds a client batch (see
//     DecodeBatch) whose messages replace it, as Java 5's MessageDecoder.decodeMessage
//     makes them: message i of the batch gets the record's Topic, QueueID,
//     QueueOffset+i, SysFlag (both batch bits still set), timestamps, hosts and
//     CommitLogOffset, and its own Flag, Body and properties plus WAIT ("true" when the
//     record has no WAIT or WAIT "true" in any case, else "false"); StoreSize, BodyCRC,
//     ReconsumeTimes and PreparedTransactionOffset stay 0. So they share the record's
//     OffsetMsgID (Java leaves theirs null); their MsgID is their UNIQ_KEY when they
//     have one.
//
// Each Body slices into body (or into the decompressed bytes) with its capacity
// clipped, so appending to one never overwrites another; an empty body is nil. All
// messages live in one []Ext allocation, topic strings are shared between consecutive
// records of the same topic, and the topics and properties of all messages share one
// string: the properties stay in their wire form until read. Decoding an uncompressed
// body costs three allocations (four beyond 32 messages).
//
// Every length is checked against the bytes left before it is used, and a record's
// fields must end exactly at its storeSize. Decoding stops at the first bad record:
// DecodeAll returns the messages before it and a *DecodeError naming its offset in body
// and the field at fault. It never panics.
func (d *Decoder) DecodeAll(body []byte) ([]*Ext, error) {
	return d.decode(body, nil, modeCopy)
}

// DecodeAllWith is DecodeAll, appending the extra properties to every message's
// properties (replacing any of the same name) at no cost per message: the pull path uses
// it for MIN_OFFSET and MAX_OFFSET, which Java sets on every pulled message. An extra
// property with an empty name or value, or with 0x01 or 0x02 in either, is an error
// before anything is decoded.
func (d *Decoder) DecodeAllWith(body []byte, extra ...Property) ([]*Ext, error) {
	return d.decodeWith(body, extra, modeCopy)
}

// DecodeOwned is DecodeAllWith for a caller that hands body over to the messages for
// good, as the pull service does with the body of a pull response: nothing may change
// body afterwards. The messages' topics and properties are then not copied out of
// body into a new string but point into it (or into the decompressed bytes),
// as their bodies do, and the extra properties are not copied into every message's
// properties but shared by them all (one copy of them per call), as a tail after each
// message's wire form (see Properties; readers see the same properties either way).
// This saves the copy of the strings and, for a pull of 32 messages with typical
// properties, about a third of the bytes decoding allocates (BenchmarkDecodeOwned),
// which the garbage collector no longer has to reclaim. The cost: a string kept from
// one message keeps the whole body alive (see Ext). Decoding an uncompressed body
// costs three allocations (four beyond 32 messages).
func (d *Decoder) DecodeOwned(body []byte, extra ...Property) ([]*Ext, error) {
	return d.decodeWith(body, extra, modeOwned)
}

// DecodeLent is DecodeOwned for a caller that lends body to the messages' bodies only:
// it reuses body's memory once it is done with them, as the pull service does for a
// consumer with WithLentBodies. The bodies point into body (or into the decompressed
// bytes), as always; the topics and properties are copied out of it into one new
// allocation, so every field but Body stays valid after body is reused; the extra
// properties are a shared tail, as with DecodeOwned (no copy of them per message, as
// DecodeAllWith makes). Decoding an uncompressed body costs four allocations (five
// beyond 32 messages).
func (d *Decoder) DecodeLent(body []byte, extra ...Property) ([]*Ext, error) {
	return d.decodeWith(body, extra, modeLent)
}

// decodeWith is decode after checking the extra properties, before anything is decoded.
func (d *Decoder) decodeWith(body []byte, extra []Property, mode decodeMode) ([]*Ext, error) {
	for _, kv := range extra {
		if err := checkProperty(kv.Name, kv.Value); err != nil {
			return nil, err
		}
	}
	return d.decode(body, extra, mode)
}

func (d *Decoder) maxDecodedSize() int {
	if d == nil || d.MaxDecodedSize <= 0 {
		return DefaultMaxDecodedSize
	}
	return d.MaxDecodedSize
}

func (d *Decoder) verifyBodyCRC() bool { return d != nil && d.VerifyBodyCRC }
