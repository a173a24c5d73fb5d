package protocol

import (
	"slices"
	"strconv"

	"github.com/rmqpush/rmqpush/message"
)

// Bounds on a decoded route, so that a route cannot make its reader allocate without
// limit when its queues are listed.
const (
	// MaxQueueNums is the largest readQueueNums or writeQueueNums a route may hold.
	MaxQueueNums = 1 << 16
	// MaxRouteQueues is the largest total of readQueueNums (and of writeQueueNums)
	// over a route's queue datas.
	MaxRouteQueues = 1 << 20
)

// MasterID is the broker id of a master in BrokerData.BrokerAddrs.
const MasterID int64 = 0

// TopicRouteData is a name server's answer to GET_ROUTEINFO_BY_TOPIC. A 5.x name
// server's topicQueueMappingByBroker (static topics) is not kept.
type TopicRouteData struct {
	OrderTopicConf    string              // omitted when empty
	QueueDatas        []QueueData         // one per broker that serves the topic
	BrokerDatas       []BrokerData        // the addresses of those brokers
	FilterServerTable map[string][]string // broker address → filter servers (deprecated)
}

// QueueData describes a topic's queues on one broker.
type QueueData struct {
	BrokerName     string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32 // Perm* bits
	TopicSysFlag   int32
}

// BrokerData describes one broker (a master and its slaves).
type BrokerData struct {
	Cluster            string
	BrokerName         string
	BrokerAddrs        map[int64]string // broker id → address; MasterID is the master
	ZoneName           string           // J5; omitted when empty
	EnableActingMaster bool             // J5; omitted when false
}

// ReadableQueues returns the queues a consumer subscribes to: ids
// 0..readQueueNums-1 of every readable queue data, in route order (Java's
// topicRouteData2TopicSubscribeInfo).
func (r *TopicRouteData) ReadableQueues(topic string) []message.Queue {
	var n int
	for _, qd := range r.QueueDatas {
		if IsReadable(qd.Perm) && qd.ReadQueueNums > 0 {
			n += int(qd.ReadQueueNums)
		}
	}
	qs := make([]message.Queue, 0, n)
	for _, qd := range r.QueueDatas {
		if !IsReadable(qd.Perm) {
			continue
		}
		for i := int32(0); i < qd.ReadQueueNums; i++ {
			qs = append(qs, message.Queue{Topic: topic, BrokerName: qd.BrokerName, QueueID: i})
		}
	}
	return qs
}

// WritableQueues returns the queues a producer sends to: ids 0..writeQueueNums-1 of
// every writable queue data whose broker has a known master, in route order (Java's
// topicRouteData2TopicPublishInfo, without its order-topic branch).
func (r *TopicRouteData) WritableQueues(topic string) []message.Queue {
	var qs []message.Queue
	for _, qd := range r.QueueDatas {
		if !IsWritable(qd.Perm) {
			continue
		}
		if _, ok := r.MasterAddr(qd.BrokerName); !ok {
			continue
		}
		for i := int32(0); i < qd.WriteQueueNums; i++ {
			qs = append(qs, message.Queue{Topic: topic, BrokerName: qd.BrokerName, QueueID: i})
		}
	}
	return qs
}

// Broker returns the broker data of the named broker.
func (r *TopicRouteData) Broker(brokerName string) (*BrokerData, bool) {
	for i := range r.BrokerDatas {
		if r.BrokerDatas[i].BrokerName == brokerName {
			return &r.BrokerDatas[i], true
		}
	}
	return nil, false
}

// BrokerNames returns the names of the brokers the route lists, in its order.
func (r *TopicRouteData) BrokerNames() []string {
	out := make([]string, len(r.BrokerDatas))
	for k, bd := range r.BrokerDatas {
		out[k] = bd.BrokerName
	}
	return out
}

// MasterAddr returns the address of the named broker's master (id 0).
func (r *TopicRouteData) MasterAddr(brokerName string) (string, bool) {
	b, ok := r.Broker(brokerName)
	if !ok {
		return "", false
	}
	addr, ok := b.BrokerAddrs[MasterID]
	return addr, ok && addr != ""
}

// AnyAddr returns an address of the named broker: the master's, or else the slave's
// with the lowest id. (Java picks a random one; a fixed choice keeps tests stable.)
func (r *TopicRouteData) AnyAddr(brokerName string) (string, bool) {
	b, ok := r.Broker(brokerName)
	if !ok {
		return "", false
	}
	return b.AnyAddr()
}

// AnyAddr returns the master's address, or else the address with the lowest id.
func (b *BrokerData) AnyAddr() (string, bool) {
	if addr, ok := b.BrokerAddrs[MasterID]; ok && addr != "" {
		return addr, true
	}
	ids := b.sortedIDs()
	for _, id := range ids {
		if addr := b.BrokerAddrs[id]; addr != "" {
			return addr, true
		}
	}
	return "", false
}

func (b *BrokerData) sortedIDs() []int64 {
	ids := make([]int64, 0, len(b.BrokerAddrs))
	for id := range b.BrokerAddrs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Encode writes the route as a name server does: StyleFastjson for clients below
// version 401 (unquoted broker ids), StyleBrowserCompatible for the others. Keys come
// in Java's (alphabetical) order.
func (r *TopicRouteData) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("brokerDatas")
	w.BeginArray()
	for i := range r.BrokerDatas {
		b := &r.BrokerDatas[i]
		w.BeginObject()
		w.Key("brokerAddrs")
		w.BeginObject()
		for _, id := range b.sortedIDs() {
			w.IntKey(id)
			w.Str(b.BrokerAddrs[id])
		}
		w.EndObject()
		w.Key("brokerName")
		w.Str(b.BrokerName)
		w.Key("cluster")
		w.Str(b.Cluster)
		if b.EnableActingMaster {
			w.Key("enableActingMaster")
			w.Bool(true)
		}
		if b.ZoneName != "" {
			w.Key("zoneName")
			w.Str(b.ZoneName)
		}
		w.EndObject()
	}
	w.EndArray()
	w.Key("filterServerTable")
	w.BeginObject()
	addrs := make([]string, 0, len(r.FilterServerTable))
	for a := range r.FilterServerTable {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	for _, a := range addrs {
		w.Key(a)
		writeStrings(w, r.FilterServerTable[a])
	}
	w.EndObject()
	if r.OrderTopicConf != "" {
		w.Key("orderTopicConf")
		w.Str(r.OrderTopicConf)
	}
	w.Key("queueDatas")
	w.BeginArray()
	for _, qd := range r.QueueDatas {
		w.BeginObject()
		w.Key("brokerName")
		w.Str(qd.BrokerName)
		w.Key("perm")
		w.Int(int64(qd.Perm))
		w.Key("readQueueNums")
		w.Int(int64(qd.ReadQueueNums))
		w.Key("topicSysFlag")
		w.Int(int64(qd.TopicSysFlag))
		w.Key("writeQueueNums")
		w.Int(int64(qd.WriteQueueNums))
		w.EndObject()
	}
	w.EndArray()
	w.EndObject()
	return w.Bytes()
}

// Decode reads a route in any of the styles. Queue numbers outside [0, MaxQueueNums],
// or adding up to more than MaxRouteQueues, are refused.
func (r *TopicRouteData) Decode(data []byte) error {
	const name = "TopicRouteData"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*r = TopicRouteData{}
	err = root.Fields(func(field string, v Value) error {
		var err error
		switch field {
		case "orderTopicConf":
			r.OrderTopicConf, err = v.Str()
		case "queueDatas":
			r.QueueDatas, err = decodeQueueDatas(v)
		case "brokerDatas":
			r.BrokerDatas, err = decodeBrokerDatas(v)
		case "filterServerTable":
			r.FilterServerTable, err = decodeFilterServers(v)
		}
		return at(field, err)
	})
	if err != nil {
		return bodyErr(name, err)
	}
	var reads, writes int64
	for _, qd := range r.QueueDatas {
		reads += int64(qd.ReadQueueNums)
		writes += int64(qd.WriteQueueNums)
	}
	if reads > MaxRouteQueues || writes > MaxRouteQueues {
		return bodyErr(name, &JSONError{Offset: root.Offset(), Msg: "route holds more than " +
			strconv.Itoa(MaxRouteQueues) + " queues"})
	}
	return nil
}

func decodeQueueDatas(v Value) ([]QueueData, error) {
	return arrayOf(v, func(e Value) (QueueData, error) {
		var qd QueueData
		err := e.Fields(func(field string, f Value) error {
			var err error
			switch field {
			case "brokerName":
				qd.BrokerName, err = f.Str()
			case "readQueueNums":
				qd.ReadQueueNums, err = queueNums(f)
			case "writeQueueNums":
				qd.WriteQueueNums, err = queueNums(f)
			case "perm":
				qd.Perm, err = f.Int32()
			case "topicSysFlag", "topicSynFlag": // rocketmq-client-go spells it topicSynFlag
				qd.TopicSysFlag, err = f.Int32()
			}
			return at(field, err)
		})
		return qd, err
	})
}

func queueNums(v Value) (int32, error) {
	n, err := v.Int32()
	if err != nil {
		return 0, err
	}
	if n < 0 || n > MaxQueueNums {
		return 0, v.errorf("queue count " + strconv.Itoa(int(n)) + " outside [0, " + strconv.Itoa(MaxQueueNums) + "]")
	}
	return n, nil
}

func decodeBrokerDatas(v Value) ([]BrokerData, error) {
	return arrayOf(v, func(e Value) (BrokerData, error) {
		var b BrokerData
		err := e.Fields(func(field string, f Value) error {
			var err error
			switch field {
			case "cluster":
				b.Cluster, err = f.Str()
			case "brokerName":
				b.BrokerName, err = f.Str()
			case "zoneName":
				b.ZoneName, err = f.Str()
			case "enableActingMaster":
				b.EnableActingMaster, err = f.Bool()
			case "brokerAddrs":
				b.BrokerAddrs, err = decodeBrokerAddrs(f)
			}
			return at(field, err)
		})
		return b, err
	})
}

// decodeBrokerAddrs reads {0:"addr"} (fastjson) or {"0":"addr"} (standard).
func decodeBrokerAddrs(v Value) (map[int64]string, error) {
	m := make(map[int64]string, v.Len())
	err := v.Members(func(k, f Value) error {
		id, err := k.Int64()
		if err != nil || k.kind == KindNull {
			if err == nil {
				err = k.wrongKind("broker id")
			}
			return at("key", err)
		}
		addr, err := f.Str()
		if err != nil {
			return at(strconv.FormatInt(id, 10), err)
		}
		m[id] = addr
		return nil
	})
	return m, err
}

func decodeFilterServers(v Value) (map[string][]string, error) {
	m := make(map[string][]string, v.Len())
	err := v.Fields(func(addr string, f Value) error {
		list, err := decodeStrings(f)
		if err != nil {
			return at(addr, err)
		}
		m[addr] = list
		return nil
	})
	return m, err
}
