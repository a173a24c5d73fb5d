package protocol

import (
	"slices"

	"github.com/rmqpush/rmqpush/message"
)

// Property names of ConsumerRunningInfo.Properties that admin tools read.
const (
	PropNameServerAddr         = "PROP_NAMESERVER_ADDR"
	PropThreadPoolCoreSize     = "PROP_THREADPOOL_CORE_SIZE"
	PropConsumeOrderly         = "PROP_CONSUMEORDERLY"
	PropConsumeType            = "PROP_CONSUME_TYPE"
	PropClientVersion          = "PROP_CLIENT_VERSION"
	PropConsumerStartTimestamp = "PROP_CONSUMER_START_TIMESTAMP"
)

// ConsumerRunningInfo is a client's answer to GET_CONSUMER_RUNNING_INFO (307)
// (PROTOCOL.md §3.13). Of the 5.x additions, mqPopTable is kept and userConsumerInfo
// is not.
type ConsumerRunningInfo struct {
	Properties      map[string]string
	SubscriptionSet []SubscriptionData
	MQTable         map[message.Queue]ProcessQueueInfo
	MQPopTable      map[message.Queue]PopProcessQueueInfo // 5.x: the queues consumed by POP; omitted when empty
	StatusTable     map[string]ConsumeStatus              // topic → statistics
	Jstack          string                                // omitted when empty
}

// PopProcessQueueInfo is the state of one queue consumed by POP (Java 5's
// PopProcessQueueInfo).
type PopProcessQueueInfo struct {
	WaitAckCount     int32 // popped messages not acked yet
	Dropped          bool  // written "droped" as Java spells it
	LastPopTimestamp int64 // ms
}

// ProcessQueueInfo is the state of one assigned queue.
type ProcessQueueInfo struct {
	CommitOffset            int64
	CachedMsgMinOffset      int64
	CachedMsgMaxOffset      int64
	CachedMsgCount          int32
	CachedMsgSizeInMiB      int32
	TransactionMsgMinOffset int64
	TransactionMsgMaxOffset int64
	TransactionMsgCount     int32
	Locked                  bool
	TryUnlockTimes          int64
	LastLockTimestamp       int64
	Dropped                 bool // written "droped" as Java spells it; "dropped" (Go) is read too
	LastPullTimestamp       int64
	LastConsumeTimestamp    int64
}

// ConsumeStatus holds a topic's consumption statistics.
type ConsumeStatus struct {
	PullRT            float64
	PullTPS           float64
	ConsumeRT         float64
	ConsumeOKTPS      float64
	ConsumeFailedTPS  float64
	ConsumeFailedMsgs int64
}

// Encode writes the running info with Java's field names and order. Java admin tools
// parse it with fastjson, so use StyleFastjson: the mqTable keys are then queue
// objects.
func (r *ConsumerRunningInfo) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	if r.Jstack != "" {
		w.Key("jstack")
		w.Str(r.Jstack)
	}
	if len(r.MQPopTable) > 0 {
		w.Key("mqPopTable")
		w.BeginObject()
		for _, q := range sortedQueues(r.MQPopTable) {
			w.QueueKey(q)
			p := r.MQPopTable[q]
			w.BeginObject()
			w.Key("droped")
			w.Bool(p.Dropped)
			w.Key("lastPopTimestamp")
			w.Int(p.LastPopTimestamp)
			w.Key("waitAckCount")
			w.Int(int64(p.WaitAckCount))
			w.EndObject()
		}
		w.EndObject()
	}
	w.Key("mqTable")
	w.BeginObject()
	for _, q := range sortedQueues(r.MQTable) {
		w.QueueKey(q)
		writeProcessQueueInfo(w, r.MQTable[q])
	}
	w.EndObject()
	w.Key("properties")
	w.BeginObject()
	for _, k := range sortedKeys(r.Properties) {
		w.Key(k)
		w.Str(r.Properties[k])
	}
	w.EndObject()
	w.Key("statusTable")
	w.BeginObject()
	for _, topic := range sortedKeys(r.StatusTable) {
		s := r.StatusTable[topic]
		w.Key(topic)
		w.BeginObject()
		w.Key("consumeFailedMsgs")
		w.Int(s.ConsumeFailedMsgs)
		w.Key("consumeFailedTPS")
		w.Float(s.ConsumeFailedTPS)
		w.Key("consumeOKTPS")
		w.Float(s.ConsumeOKTPS)
		w.Key("consumeRT")
		w.Float(s.ConsumeRT)
		w.Key("pullRT")
		w.Float(s.PullRT)
		w.Key("pullTPS")
		w.Float(s.PullTPS)
		w.EndObject()
	}
	w.EndObject()
	w.Key("subscriptionSet")
	writeSubscriptions(w, r.SubscriptionSet)
	w.EndObject()
	return w.Bytes()
}

func writeProcessQueueInfo(w *Writer, p ProcessQueueInfo) {
	w.BeginObject()
	w.Key("cachedMsgCount")
	w.Int(int64(p.CachedMsgCount))
	w.Key("cachedMsgMaxOffset")
	w.Int(p.CachedMsgMaxOffset)
	w.Key("cachedMsgMinOffset")
	w.Int(p.CachedMsgMinOffset)
	w.Key("cachedMsgSizeInMiB")
	w.Int(int64(p.CachedMsgSizeInMiB))
	w.Key("commitOffset")
	w.Int(p.CommitOffset)
	w.Key("droped")
	w.Bool(p.Dropped)
	w.Key("lastConsumeTimestamp")
	w.Int(p.LastConsumeTimestamp)
	w.Key("lastLockTimestamp")
	w.Int(p.LastLockTimestamp)
	w.Key("lastPullTimestamp")
	w.Int(p.LastPullTimestamp)
	w.Key("locked")
	w.Bool(p.Locked)
	w.Key("transactionMsgCount")
	w.Int(int64(p.TransactionMsgCount))
	w.Key("transactionMsgMaxOffset")
	w.Int(p.TransactionMsgMaxOffset)
	w.Key("transactionMsgMinOffset")
	w.Int(p.TransactionMsgMinOffset)
	w.Key("tryUnlockTimes")
	w.Int(p.TryUnlockTimes)
	w.EndObject()
}

// Decode reads running info from a Java or Go client, in any style.
func (r *ConsumerRunningInfo) Decode(data []byte) error {
	const name = "ConsumerRunningInfo"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*r = ConsumerRunningInfo{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		var err error
		switch field {
		case "properties":
			r.Properties, err = decodeStringMap(v)
		case "subscriptionSet":
			r.SubscriptionSet, err = decodeSubscriptions(v)
		case "mqTable":
			r.MQTable, err = decodeMQTable(v)
		case "mqPopTable":
			r.MQPopTable, err = decodeMQPopTable(v)
		case "statusTable":
			r.StatusTable, err = decodeStatusTable(v)
		case "jstack":
			r.Jstack, err = v.Str()
		}
		return at(field, err)
	}))
}

func decodeMQTable(v Value) (map[message.Queue]ProcessQueueInfo, error) {
	m := make(map[message.Queue]ProcessQueueInfo, v.Len())
	err := v.Members(func(k, f Value) error {
		q, err := decodeQueue(k)
		if err != nil {
			return err
		}
		var p ProcessQueueInfo
		err = f.Fields(func(field string, x Value) error {
			var err error
			switch field {
			case "commitOffset":
				p.CommitOffset, err = x.Int64()
			case "cachedMsgMinOffset":
				p.CachedMsgMinOffset, err = x.Int64()
			case "cachedMsgMaxOffset":
				p.CachedMsgMaxOffset, err = x.Int64()
			case "cachedMsgCount":
				p.CachedMsgCount, err = x.Int32()
			case "cachedMsgSizeInMiB":
				p.CachedMsgSizeInMiB, err = x.Int32()
			case "transactionMsgMinOffset":
				p.TransactionMsgMinOffset, err = x.Int64()
			case "transactionMsgMaxOffset":
				p.TransactionMsgMaxOffset, err = x.Int64()
			case "transactionMsgCount":
				p.TransactionMsgCount, err = x.Int32()
			case "locked":
				p.Locked, err = x.Bool()
			case "tryUnlockTimes":
				p.TryUnlockTimes, err = x.Int64()
			case "lastLockTimestamp":
				p.LastLockTimestamp, err = x.Int64()
			case "droped", "dropped":
				p.Dropped, err = x.Bool()
			case "lastPullTimestamp":
				p.LastPullTimestamp, err = x.Int64()
			case "lastConsumeTimestamp":
				p.LastConsumeTimestamp, err = x.Int64()
			}
			return at(field, err)
		})
		if err != nil {
			return at(q.String(), err)
		}
		m[q] = p
		return nil
	})
	return m, err
}

func decodeMQPopTable(v Value) (map[message.Queue]PopProcessQueueInfo, error) {
	m := make(map[message.Queue]PopProcessQueueInfo, v.Len())
	err := v.Members(func(k, f Value) error {
		q, err := decodeQueue(k)
		if err != nil {
			return err
		}
		var p PopProcessQueueInfo
		err = f.Fields(func(field string, x Value) error {
			var err error
			switch field {
			case "waitAckCount":
				p.WaitAckCount, err = x.Int32()
			case "droped", "dropped":
				p.Dropped, err = x.Bool()
			case "lastPopTimestamp":
				p.LastPopTimestamp, err = x.Int64()
			}
			return at(field, err)
		})
		if err != nil {
			return at(q.String(), err)
		}
		m[q] = p
		return nil
	})
	return m, err
}

func decodeStatusTable(v Value) (map[string]ConsumeStatus, error) {
	m := make(map[string]ConsumeStatus, v.Len())
	err := v.Fields(func(topic string, f Value) error {
		var s ConsumeStatus
		err := f.Fields(func(field string, x Value) error {
			var err error
			switch field {
			case "pullRT":
				s.PullRT, err = x.Float64()
			case "pullTPS":
				s.PullTPS, err = x.Float64()
			case "consumeRT":
				s.ConsumeRT, err = x.Float64()
			case "consumeOKTPS":
				s.ConsumeOKTPS, err = x.Float64()
			case "consumeFailedTPS":
				s.ConsumeFailedTPS, err = x.Float64()
			case "consumeFailedMsgs":
				s.ConsumeFailedMsgs, err = x.Int64()
			}
			return at(field, err)
		})
		if err != nil {
			return at(topic, err)
		}
		m[topic] = s
		return nil
	})
	return m, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
