package protocol

// ConsumeType says how a consumer gets messages.
type ConsumeType string

// Consume types.
const (
	ConsumeActively  ConsumeType = "CONSUME_ACTIVELY"  // pull consumer
	ConsumePassively ConsumeType = "CONSUME_PASSIVELY" // push consumer
	ConsumePop       ConsumeType = "CONSUME_POP"
)

// MessageModel is a consumer group's message model.
type MessageModel string

// Message models.
const (
	Clustering   MessageModel = "CLUSTERING"
	Broadcasting MessageModel = "BROADCASTING"
)

// ConsumeFromWhere is where a new consumer group starts.
type ConsumeFromWhere string

// Starting points.
const (
	ConsumeFromLastOffset  ConsumeFromWhere = "CONSUME_FROM_LAST_OFFSET"
	ConsumeFromFirstOffset ConsumeFromWhere = "CONSUME_FROM_FIRST_OFFSET"
	ConsumeFromTimestamp   ConsumeFromWhere = "CONSUME_FROM_TIMESTAMP"
)

// HeartbeatData is the body of HEART_BEAT (34) (PROTOCOL.md §3.11).
type HeartbeatData struct {
	ClientID        string // "clientID" (capital ID)
	ProducerDataSet []ProducerData
	ConsumerDataSet []ConsumerData

	// The fields 5.x clients add (golden p_pop_533, p2_pull_533: always 0 and false,
	// with the full data set; the fingerprint-only "v2" heartbeat is off by default in
	// Java). Written only when set, so a 4.9.8 client's heartbeat re-encodes as it came.
	HeartbeatFingerprint Optional[int64]
	WithoutSub           Optional[bool]
}

// ProducerData names one producer group of the client.
type ProducerData struct {
	GroupName string
}

// ConsumerData describes one consumer group of the client.
type ConsumerData struct {
	GroupName           string
	ConsumeType         ConsumeType
	MessageModel        MessageModel
	ConsumeFromWhere    ConsumeFromWhere
	SubscriptionDataSet []SubscriptionData
	UnitMode            bool
}

// Encode writes the heartbeat as the Java client does (keys in alphabetical order).
// The body holds no non-string keys, so the style matters only for escaping.
func (h *HeartbeatData) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("clientID")
	w.Str(h.ClientID)
	w.Key("consumerDataSet")
	w.BeginArray()
	for i := range h.ConsumerDataSet {
		c := &h.ConsumerDataSet[i]
		w.BeginObject()
		w.Key("consumeFromWhere")
		w.Str(string(c.ConsumeFromWhere))
		w.Key("consumeType")
		w.Str(string(c.ConsumeType))
		w.Key("groupName")
		w.Str(c.GroupName)
		w.Key("messageModel")
		w.Str(string(c.MessageModel))
		w.Key("subscriptionDataSet")
		writeSubscriptions(w, c.SubscriptionDataSet)
		w.Key("unitMode")
		w.Bool(c.UnitMode)
		w.EndObject()
	}
	w.EndArray()
	if h.HeartbeatFingerprint.Set {
		w.Key("heartbeatFingerprint")
		w.Int(h.HeartbeatFingerprint.Value)
	}
	w.Key("producerDataSet")
	w.BeginArray()
	for _, p := range h.ProducerDataSet {
		w.BeginObject()
		w.Key("groupName")
		w.Str(p.GroupName)
		w.EndObject()
	}
	w.EndArray()
	if h.WithoutSub.Set {
		w.Key("withoutSub")
		w.Bool(h.WithoutSub.Value)
	}
	w.EndObject()
	return w.Bytes()
}

// Decode reads a heartbeat from any client.
func (h *HeartbeatData) Decode(data []byte) error {
	const name = "HeartbeatData"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*h = HeartbeatData{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		var err error
		switch field {
		case "clientID":
			h.ClientID, err = v.Str()
		case "producerDataSet":
			h.ProducerDataSet, err = decodeProducerDatas(v)
		case "consumerDataSet":
			h.ConsumerDataSet, err = decodeConsumerDatas(v)
		case "heartbeatFingerprint":
			h.HeartbeatFingerprint.Set = true
			h.HeartbeatFingerprint.Value, err = v.Int64()
		case "withoutSub":
			h.WithoutSub.Set = true
			h.WithoutSub.Value, err = v.Bool()
		}
		return at(field, err)
	}))
}

func decodeProducerDatas(v Value) ([]ProducerData, error) {
	return arrayOf(v, func(e Value) (ProducerData, error) {
		var p ProducerData
		err := e.Fields(func(field string, f Value) error {
			if field != "groupName" {
				return nil
			}
			var err error
			p.GroupName, err = f.Str()
			return at(field, err)
		})
		return p, err
	})
}

func decodeConsumerDatas(v Value) ([]ConsumerData, error) {
	return arrayOf(v, func(e Value) (ConsumerData, error) {
		var c ConsumerData
		err := e.Fields(func(field string, f Value) error {
			var err error
			var s string
			switch field {
			case "groupName":
				c.GroupName, err = f.Str()
			case "consumeType":
				s, err = f.Str()
				c.ConsumeType = ConsumeType(s)
			case "messageModel":
				s, err = f.Str()
				c.MessageModel = MessageModel(s)
			case "consumeFromWhere":
				s, err = f.Str()
				c.ConsumeFromWhere = ConsumeFromWhere(s)
			case "subscriptionDataSet":
				c.SubscriptionDataSet, err = decodeSubscriptions(f)
			case "unitMode":
				c.UnitMode, err = f.Bool()
			}
			return at(field, err)
		})
		return c, err
	})
}
