package control

import (
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// BrokerInfo is one broker in GET /brokers.
type BrokerInfo struct {
	Name    string `json:"name"`    // e.g. broker-a
	Addr    string `json:"addr"`    // host:port, the same across restarts
	Running bool   `json:"running"` // false while stopped or killed
}

// FaultSpec is fakebroker.Fault in JSON, durations as Go duration strings ("5s").
type FaultSpec struct {
	Code   int32  `json:"code"`             // the request code it applies to
	Drop   bool   `json:"drop,omitempty"`   // swallow the request
	Fail   int32  `json:"fail,omitempty"`   // answer with this response code
	Remark string `json:"remark,omitempty"` // the remark of a Fail answer
	Delay  string `json:"delay,omitempty"`  // handle (or fail) it this much later, e.g. "50ms"
	Times  int    `json:"times,omitempty"`  // at most this many requests; 0: no limit
	For    string `json:"for,omitempty"`    // at most this long, e.g. "5s"; "": no limit
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

// LagSpec is fakebroker.Lag in JSON, durations as Go duration strings ("300us"); POST
// /brokers/{name}/lag takes a list of them (an empty list: none).
type LagSpec struct {
	Code int32  `json:"code"` // the request code, or -1 for every code
	Min  string `json:"min"`  // e.g. "0s"
	Max  string `json:"max"`  // e.g. "5ms"; "": Min
}

// Lag returns the fakebroker.Lag s describes.
func (s LagSpec) Lag() (fakebroker.Lag, error) {
	l := fakebroker.Lag{Code: s.Code}
	var err error
	if l.Min, err = time.ParseDuration(s.Min); err != nil {
		return l, fmt.Errorf("lag min %q: %w", s.Min, err)
	}
	l.Max = l.Min
	if s.Max != "" {
		if l.Max, err = time.ParseDuration(s.Max); err != nil {
			return l, fmt.Errorf("lag max %q: %w", s.Max, err)
		}
	}
	return l, nil
}

// NameServerKey is the name server's key in GET /requests, beside the brokers' names.
const NameServerKey = "namesrv"

// Regressions is one broker in GET /regressions: the consumer-offset writes that moved
// a stored offset back (fakebroker.Broker.OffsetRegressions).
type Regressions struct {
	Count  int                           `json:"count"`  // how many
	Recent []fakebroker.OffsetRegression `json:"recent"` // the most recent, oldest first
}

// ProduceRequest is the body of POST /produce: one message per body, round robin over
// the topic's queues (Cluster.Produce), with optional tags.
type ProduceRequest struct {
	Topic  string   `json:"topic"`          // the topic, created if needed
	Bodies []string `json:"bodies"`         // one message per body
	Tags   string   `json:"tags,omitempty"` // the TAGS of every message
}

// produceResult is the answer to POST /produce.
type produceResult struct {
	Count int `json:"count"` // messages stored
}

// QueueOffsets is one queue in GET /offsets. Committed is -1 when the group has no
// offset for the queue.
type QueueOffsets struct {
	Broker    string `json:"broker"`    // the broker's name
	QueueID   int32  `json:"queueId"`   // the queue on it
	Min       int64  `json:"min"`       // the queue's min offset
	Max       int64  `json:"max"`       // the queue's max offset
	Committed int64  `json:"committed"` // the group's committed offset, or -1
}

// StoredMessage is one message in GET /messages.
type StoredMessage struct {
	Broker         string            `json:"broker"`         // the broker storing it
	QueueID        int32             `json:"queueId"`        // its queue
	QueueOffset    int64             `json:"queueOffset"`    // its offset in the queue
	Body           string            `json:"body"`           // the body, as text
	ReconsumeTimes int32             `json:"reconsumeTimes"` // failed deliveries before it was stored here
	BornTimestamp  int64             `json:"bornTimestamp"`  // ms since the epoch, made by the producer
	StoreTimestamp int64             `json:"storeTimestamp"` // ms since the epoch, stored
	Properties     map[string]string `json:"properties"`     // every property
}

// ConsumeModeRequest is the body of POST /consume-mode, what mqadmin setConsumeMode
// sets (Cluster.SetConsumeMode).
type ConsumeModeRequest struct {
	Group            string `json:"group"`                      // the consumer group
	Topic            string `json:"topic"`                      // the topic
	Mode             string `json:"mode"`                       // POP or PULL
	PopShareQueueNum int    `json:"popShareQueueNum,omitempty"` // POP: other members' queues each member pops too; 0: every queue
}
