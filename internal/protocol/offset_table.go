package protocol

import "github.com/rmqpush/rmqpush/message"

// OffsetTableBody is Java's OffsetSerializeWrapper: the content of a broadcasting
// consumer's local offsets file, {"offsetTable":{<queue>:offset}}. Java reads the file
// with fastjson, so write it in StyleFastjson for a file a Java client can read.
type OffsetTableBody struct {
	OffsetTable map[message.Queue]int64
}

// Encode writes the body with queue keys in the given style.
func (b *OffsetTableBody) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("offsetTable")
	writeQueueOffsets(w, b.OffsetTable)
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body in any style.
func (b *OffsetTableBody) Decode(data []byte) error {
	const name = "OffsetTableBody"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = OffsetTableBody{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		if field != "offsetTable" {
			return nil
		}
		var err error
		b.OffsetTable, err = decodeQueueOffsets(v)
		return at(field, err)
	}))
}
