package protocol

// ConsumerIDList is the body of a GET_CONSUMER_LIST_BY_GROUP answer.
type ConsumerIDList struct {
	ConsumerIDList []string // "consumerIdList"
}

// Encode writes the body.
func (b *ConsumerIDList) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("consumerIdList")
	writeStrings(w, b.ConsumerIDList)
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body.
func (b *ConsumerIDList) Decode(data []byte) error {
	const name = "ConsumerIDList"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = ConsumerIDList{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		if field != "consumerIdList" {
			return nil
		}
		var err error
		b.ConsumerIDList, err = decodeStrings(v)
		return at(field, err)
	}))
}

// CheckClientConfigBody is the body of CHECK_CLIENT_CONFIG (46), which a client sends
// before using an SQL92 subscription.
type CheckClientConfigBody struct {
	ClientID         string // "clientId"
	Group            string
	SubscriptionData SubscriptionData
}

// Encode writes the body.
func (b *CheckClientConfigBody) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("clientId")
	w.Str(b.ClientID)
	w.Key("group")
	w.Str(b.Group)
	w.Key("subscriptionData")
	writeSubscription(w, &b.SubscriptionData)
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body.
func (b *CheckClientConfigBody) Decode(data []byte) error {
	const name = "CheckClientConfigBody"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = CheckClientConfigBody{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		var err error
		switch field {
		case "clientId":
			b.ClientID, err = v.Str()
		case "group":
			b.Group, err = v.Str()
		case "subscriptionData":
			b.SubscriptionData, err = decodeSubscription(v)
		}
		return at(field, err)
	}))
}
