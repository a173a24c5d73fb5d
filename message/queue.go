package message

import (
	"cmp"
	"strconv"
)

// Queue identifies one message queue: queue QueueID of Topic on broker BrokerName.
// It is comparable and can be used as a map key.
type Queue struct {
	Topic      string // the topic
	BrokerName string // the broker holding the queue, e.g. "broker-a"
	QueueID    int32  // the queue's number on that broker
}

// String returns "topic@broker:queueId", the form used in rmqpush's errors and logs.
func (q Queue) String() string {
	return q.Topic + "@" + q.BrokerName + ":" + strconv.Itoa(int(q.QueueID))
}

// Compare orders queues as Java's MessageQueue.compareTo does: by topic, then broker
// name, then queue id. Allocation strategies depend on this order.
func (q Queue) Compare(o Queue) int {
	if c := cmp.Compare(q.Topic, o.Topic); c != 0 {
		return c
	}
	if c := cmp.Compare(q.BrokerName, o.BrokerName); c != 0 {
		return c
	}
	return cmp.Compare(q.QueueID, o.QueueID)
}
