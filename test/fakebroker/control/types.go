package control

import (
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// BrokerInfo is one broker in GET /brokers.
type BrokerInfo struct {
	Name    string `json:"name"`
	Addr    string `json:"addr"`
	Running bool   `json:"running"`
}

// FaultSpec is fakebroker.Fault in JSON, durations as Go duration strings ("5s").
type FaultSpec struct {
	Code   int32  `json:"code"`
	Drop   bool   `json:"drop,omitempty"`
	Fail   int32  `json:"fail,omitempty"`
	Remark string `json:"remark,omitempty"`
	Delay  string `json:"delay,omitempty"`
	Times  int    `json:"times,omitempty"`
	For    string `json:"for,omitempty"`
}

// Fault returns the fakebroker.Fault s describes.
func (s FaultSpec) Fault() (fakebroker.Fault, error) {
	f := fakebroker.Fault{Code: s.Code, Drop: s.Drop, Fail: s.Fail, Remark: s.Remark, Times: s.Times}
	for _, d := range []struct {
		name string
		text string
		dst  *time.Duration
	}{{"delay", s.Delay, &f.Delay}, {"for", s.For, &f.For}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return f, fmt.Errorf("fault %s %q: %w", d.name, d.text, err)
		}
		*d.dst = v
	}
	return f, nil
}

// ProduceRequest is the body of POST /produce: one message per body, round robin over
// the topic's queues (Cluster.Produce), with optional tags.
type ProduceRequest struct {
	Topic  string   `json:"topic"`
	Bodies []string `json:"bodies"`
	Tags   string   `json:"tags,omitempty"`
}

// produceResult is the answer to POST /produce.
type produceResult struct {
	Count int `json:"count"`
}

// QueueOffsets is one queue in GET /offsets. Committed is -1 when the group has no
// offset for the queue.
type QueueOffsets struct {
	Broker    string `json:"broker"`
	QueueID   int32  `json:"queueId"`
	Min       int64  `json:"min"`
	Max       int64  `json:"max"`
	Committed int64  `json:"committed"`
}

// StoredMessage is one message in GET /messages.
type StoredMessage struct {
	Broker         string            `json:"broker"`
	QueueID        int32             `json:"queueId"`
	QueueOffset    int64             `json:"queueOffset"`
	Body           string            `json:"body"`
	ReconsumeTimes int32             `json:"reconsumeTimes"`
	BornTimestamp  int64             `json:"bornTimestamp"`
	StoreTimestamp int64             `json:"storeTimestamp"`
	Properties     map[string]string `json:"properties"`
}
