package protocol

import "github.com/rmqpush/rmqpush/message"

// LockBatchRequest is the body of LOCK_BATCH_MQ (41): lock these queues for this
// client of the group.
type LockBatchRequest struct {
	ConsumerGroup  string
	ClientID       string // "clientId"
	OnlyThisBroker bool
	MQSet          []message.Queue
}

// Encode writes the body (keys in Java's order; queues as objects).
func (b *LockBatchRequest) Encode(style Style) []byte {
	return encodeBatchRequest(style, b.ConsumerGroup, b.ClientID, b.OnlyThisBroker, b.MQSet)
}

// Decode reads the body.
func (b *LockBatchRequest) Decode(data []byte) error {
	*b = LockBatchRequest{}
	return decodeBatchRequest("LockBatchRequest", data, &b.ConsumerGroup, &b.ClientID, &b.OnlyThisBroker, &b.MQSet)
}

// UnlockBatchRequest is the body of UNLOCK_BATCH_MQ (42).
type UnlockBatchRequest struct {
	ConsumerGroup  string
	ClientID       string // "clientId"
	OnlyThisBroker bool
	MQSet          []message.Queue
}

// Encode writes the body (keys in Java's order; queues as objects).
func (b *UnlockBatchRequest) Encode(style Style) []byte {
	return encodeBatchRequest(style, b.ConsumerGroup, b.ClientID, b.OnlyThisBroker, b.MQSet)
}

// Decode reads the body.
func (b *UnlockBatchRequest) Decode(data []byte) error {
	*b = UnlockBatchRequest{}
	return decodeBatchRequest("UnlockBatchRequest", data, &b.ConsumerGroup, &b.ClientID, &b.OnlyThisBroker, &b.MQSet)
}

func encodeBatchRequest(style Style, group, clientID string, onlyThis bool, mqs []message.Queue) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("clientId")
	w.Str(clientID)
	w.Key("consumerGroup")
	w.Str(group)
	w.Key("mqSet")
	writeQueues(w, mqs)
	w.Key("onlyThisBroker")
	w.Bool(onlyThis)
	w.EndObject()
	return w.Bytes()
}

func decodeBatchRequest(name string, data []byte, group, clientID *string, onlyThis *bool, mqs *[]message.Queue) error {
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		var err error
		switch field {
		case "consumerGroup":
			*group, err = v.Str()
		case "clientId":
			*clientID, err = v.Str()
		case "onlyThisBroker":
			*onlyThis, err = v.Bool()
		case "mqSet":
			*mqs, err = decodeQueues(v)
		}
		return at(field, err)
	}))
}

// LockBatchResponse is the body of a LOCK_BATCH_MQ answer: the queues now locked by
// the requesting client.
type LockBatchResponse struct {
	LockOKMQSet []message.Queue
}

// Encode writes the body.
func (b *LockBatchResponse) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("lockOKMQSet")
	writeQueues(w, b.LockOKMQSet)
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body.
func (b *LockBatchResponse) Decode(data []byte) error {
	const name = "LockBatchResponse"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = LockBatchResponse{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		if field != "lockOKMQSet" {
			return nil
		}
		var err error
		b.LockOKMQSet, err = decodeQueues(v)
		return at(field, err)
	}))
}
