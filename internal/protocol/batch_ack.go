package protocol

import (
	"encoding/base64"
	"fmt"
	"strconv"
)

// BatchAckRequest is the body of BATCH_ACK_MESSAGE (200151), Java 5.3.3's
// BatchAckMessageRequestBody: the acks of many popped messages of one broker in one
// request. Java's push consumer does not send it (one ACK_MESSAGE per message, golden
// p_pop_533); a 5.3.3 broker handles it. No capture holds one: the format is Java's
// (fastjson with the short @JSONField names; the bit set as Java's BitSet.toByteArray
// in base64), checked against a real 5.3.3 broker.
type BatchAckRequest struct {
	BrokerName string
	Acks       []BatchAck
}

// BatchAck acks the messages of one pop of one queue: those at StartOffset + i for
// every bit i set.
type BatchAck struct {
	ConsumerGroup string // "c"
	Topic         string // "t": the topic popped for (never the retry topic; Retry says which)
	Retry         byte   // "r": the topic mark, TopicMarkNormal, TopicMarkRetry or TopicMarkRetryV2
	StartOffset   int64  // "so": the handle's ckQueueOffset
	QueueID       int32  // "q"
	ReviveQueueID int32  // "rq"
	PopTime       int64  // "pt"
	InvisibleTime int64  // "it"
	Bits          []uint64
}

// Set marks offset i (from StartOffset) acked and reports whether it could: an i below 0
// or at or beyond the bit-set bound a peer accepts (maxBatchAckBits) is not set, and the
// caller acks that message by itself.
func (a *BatchAck) Set(i int) bool {
	if i < 0 || i >= maxBatchAckBits {
		return false
	}
	for len(a.Bits) <= i/64 {
		a.Bits = append(a.Bits, 0)
	}
	a.Bits[i/64] |= 1 << (i % 64)
	return true
}

// Has reports whether offset i (from StartOffset) is acked.
func (a *BatchAck) Has(i int) bool {
	return i >= 0 && i/64 < len(a.Bits) && a.Bits[i/64]&(1<<(i%64)) != 0
}

// Offsets returns the acked offsets, lowest first.
func (a *BatchAck) Offsets() []int64 {
	var out []int64
	for w, bits := range a.Bits {
		for b := 0; b < 64; b++ {
			if bits&(1<<b) != 0 {
				out = append(out, a.StartOffset+int64(w*64+b))
			}
		}
	}
	return out
}

// bitSetBytes is Java's BitSet.toByteArray: little-endian, trailing zero bytes dropped.
func bitSetBytes(bits []uint64) []byte {
	out := make([]byte, 0, 8*len(bits))
	for _, w := range bits {
		for k := 0; k < 8; k++ {
			out = append(out, byte(w>>(8*k)))
		}
	}
	for len(out) > 0 && out[len(out)-1] == 0 {
		out = out[:len(out)-1]
	}
	return out
}

// maxBatchAcks bounds the acks of one BatchAckRequest a peer may send (Java's has no
// bound; our client's acker flushes at 64 messages, pull's maxAckBatch). Each ack
// re-encodes as 19 JSON values, so the bound also keeps every request that decodes
// re-encodable into a body Parse accepts (MaxValues): without it, 2-byte acks ({}) that
// expand to ~80 bytes each made a 330 KB body decode into one that no longer parsed.
const maxBatchAcks = 1 << 12

// maxBatchAckBits bounds the bit set of one BatchAck a peer may send (Java's
// BitSet.valueOf has no bound; a pop spans at most a few thousand offsets).
const maxBatchAckBits = 1 << 16

func bitSetFromBytes(b []byte) ([]uint64, error) {
	if len(b)*8 > maxBatchAckBits {
		return nil, fmt.Errorf("bit set of %d bytes is longer than %d bits", len(b), maxBatchAckBits)
	}
	out := make([]uint64, (len(b)+7)/8)
	for i, x := range b {
		out[i/8] |= uint64(x) << (8 * (i % 8))
	}
	return out, nil
}

// Encode writes the body as Java's fastjson does: keys in alphabetical order, a
// BatchAck's under its short names.
func (b *BatchAckRequest) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("acks")
	w.BeginArray()
	for _, a := range b.Acks {
		w.BeginObject()
		w.Key("b")
		w.Str(base64.StdEncoding.EncodeToString(bitSetBytes(a.Bits)))
		w.Key("c")
		w.Str(a.ConsumerGroup)
		w.Key("it")
		w.Int(a.InvisibleTime)
		w.Key("pt")
		w.Int(a.PopTime)
		w.Key("q")
		w.Int(int64(a.QueueID))
		w.Key("r")
		w.Str(string(rune(a.Retry)))
		w.Key("rq")
		w.Int(int64(a.ReviveQueueID))
		w.Key("so")
		w.Int(a.StartOffset)
		w.Key("t")
		w.Str(a.Topic)
		w.EndObject()
	}
	w.EndArray()
	w.Key("brokerName")
	w.Str(b.BrokerName)
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body; a BatchAck's fields may have their short or long names, as
// Java's alternateNames allow, and its bit set may be base64 or an array of bytes.
func (b *BatchAckRequest) Decode(data []byte) error {
	const name = "BatchAckRequest"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = BatchAckRequest{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		var err error
		switch field {
		case "brokerName":
			b.BrokerName, err = v.Str()
		case "acks":
			if v.Len() > maxBatchAcks {
				err = v.errorf("more than " + strconv.Itoa(maxBatchAcks) + " acks")
			} else if !v.IsNull() {
				b.Acks, err = arrayOf(v, decodeBatchAck)
			}
		}
		return at(field, err)
	}))
}

func decodeBatchAck(v Value) (BatchAck, error) {
	a := BatchAck{Retry: TopicMarkNormal}
	err := v.Fields(func(field string, x Value) error {
		var err error
		switch field {
		case "c", "consumerGroup":
			a.ConsumerGroup, err = x.Str()
		case "t", "topic":
			a.Topic, err = x.Str()
		case "r", "retry":
			var s string
			if s, err = x.Str(); err == nil {
				if len(s) != 1 || s[0] < TopicMarkNormal || s[0] > TopicMarkRetryV2 {
					err = fmt.Errorf("topic mark %q is not 0, 1 or 2", truncate(s))
				} else {
					a.Retry = s[0]
				}
			}
		case "so", "startOffset":
			a.StartOffset, err = x.Int64()
		case "q", "queueId":
			a.QueueID, err = x.Int32()
		case "rq", "reviveQueueId":
			a.ReviveQueueID, err = x.Int32()
		case "pt", "popTime":
			a.PopTime, err = x.Int64()
		case "it", "invisibleTime":
			a.InvisibleTime, err = x.Int64()
		case "b", "bitSet":
			a.Bits, err = decodeBitSet(x)
		}
		return at(field, err)
	})
	return a, err
}

func decodeBitSet(v Value) ([]uint64, error) {
	switch v.Kind() {
	case KindString:
		s, _ := v.Str()
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("bit set: %w", err)
		}
		return bitSetFromBytes(raw)
	case KindArray:
		if v.Len()*8 > maxBatchAckBits {
			return nil, fmt.Errorf("bit set of %d bytes is longer than %d bits", v.Len(), maxBatchAckBits)
		}
		raw := make([]byte, v.Len())
		for i := range raw {
			n, err := v.Index(i).Int32()
			if err != nil || n < -128 || n > 255 {
				return nil, fmt.Errorf("bit set byte %d is not a byte", i)
			}
			raw[i] = byte(n)
		}
		return bitSetFromBytes(raw)
	case KindNull:
		return nil, nil
	}
	return nil, v.wrongKind("base64 string or byte array")
}
