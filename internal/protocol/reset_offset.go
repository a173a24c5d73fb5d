package protocol

import "github.com/rmqpush/rmqpush/message"

// ResetOffsetBody is the body of RESET_CONSUMER_CLIENT_OFFSET (220) and of an
// INVOKE_BROKER_TO_RESET_OFFSET answer: the offset to reset each queue to.
type ResetOffsetBody struct {
	OffsetTable map[message.Queue]int64
}

// Encode writes the map form, {"offsetTable":{<queue>:offset}}, as the broker does;
// use StyleFastjson, the only form Java clients read.
func (b *ResetOffsetBody) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("offsetTable")
	writeQueueOffsets(w, b.OffsetTable)
	w.EndObject()
	return w.Bytes()
}

// EncodeList writes the list form the broker sends when the admin asks for the C++
// client's format (mqadmin resetOffsetByTime -c):
// {"offsetTable":[{"brokerName","offset","queueId","topic"}]}.
func (b *ResetOffsetBody) EncodeList(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("offsetTable")
	w.BeginArray()
	for _, q := range sortedQueues(b.OffsetTable) {
		w.BeginObject()
		w.Key("brokerName")
		w.Str(q.BrokerName)
		w.Key("offset")
		w.Int(b.OffsetTable[q])
		w.Key("queueId")
		w.Int(int64(q.QueueID))
		w.Key("topic")
		w.Str(q.Topic)
		w.EndObject()
	}
	w.EndArray()
	w.EndObject()
	return w.Bytes()
}

// Decode reads either form: the map with queue keys (objects or, in standard style,
// strings holding the queue's JSON) or the C++ list.
func (b *ResetOffsetBody) Decode(data []byte) error {
	const name = "ResetOffsetBody"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = ResetOffsetBody{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		if field != "offsetTable" {
			return nil
		}
		var err error
		if v.kind == KindArray {
			b.OffsetTable, err = decodeOffsetList(v)
		} else {
			b.OffsetTable, err = decodeQueueOffsets(v)
		}
		return at(field, err)
	}))
}

func decodeOffsetList(v Value) (map[message.Queue]int64, error) {
	m := make(map[message.Queue]int64, v.Len())
	for i, e := range v.kids {
		q, err := decodeQueueObject(e)
		if err != nil {
			return nil, atIndex("", i, err)
		}
		off, err := e.Get("offset").Int64()
		if err != nil {
			return nil, atIndex("", i, at("offset", err))
		}
		m[q] = off
	}
	return m, nil
}

// ConsumerStatusBody is a client's answer to GET_CONSUMER_STATUS_FROM_CLIENT (221),
// and with ConsumerTable filled, the broker's answer to
// INVOKE_BROKER_TO_GET_CONSUMER_STATUS (Java's GetConsumerStatusBody).
type ConsumerStatusBody struct {
	MessageQueueTable map[message.Queue]int64
	ConsumerTable     map[string]map[message.Queue]int64 // client id → queue offsets; omitted when empty
}

// Encode writes the body; use StyleFastjson for Java peers.
func (b *ConsumerStatusBody) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	if len(b.ConsumerTable) > 0 {
		w.Key("consumerTable")
		w.BeginObject()
		for _, id := range sortedKeys(b.ConsumerTable) {
			w.Key(id)
			writeQueueOffsets(w, b.ConsumerTable[id])
		}
		w.EndObject()
	}
	w.Key("messageQueueTable")
	writeQueueOffsets(w, b.MessageQueueTable)
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body in any style.
func (b *ConsumerStatusBody) Decode(data []byte) error {
	const name = "ConsumerStatusBody"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = ConsumerStatusBody{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		var err error
		switch field {
		case "messageQueueTable":
			b.MessageQueueTable, err = decodeQueueOffsets(v)
		case "consumerTable":
			b.ConsumerTable = make(map[string]map[message.Queue]int64, v.Len())
			err = v.Fields(func(id string, t Value) error {
				m, err := decodeQueueOffsets(t)
				if err != nil {
					return at(id, err)
				}
				b.ConsumerTable[id] = m
				return nil
			})
		}
		return at(field, err)
	}))
}
