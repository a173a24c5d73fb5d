package protocol

import "github.com/rmqpush/rmqpush/remoting"

// QueryConsumerOffsetRequest is the header of QUERY_CONSUMER_OFFSET (14).
type QueryConsumerOffsetRequest struct {
	ConsumerGroup     string         // required
	Topic             string         // required
	QueueID           int32          // required
	SetZeroIfNotFound Optional[bool] // J5; the broker reads unset as true
	BrokerName        string         // "bname"; omitted when empty
}

// Encode returns the ext fields.
func (h *QueryConsumerOffsetRequest) Encode() remoting.Fields {
	e := newFieldEncoder(5)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.optBool("setZeroIfNotFound", h.SetZeroIfNotFound)
	e.strOpt("bname", h.BrokerName)
	return e.done()
}

// Decode reads the header from f.
func (h *QueryConsumerOffsetRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "QueryConsumerOffsetRequest"}
	*h = QueryConsumerOffsetRequest{
		ConsumerGroup:     d.str("consumerGroup", true),
		Topic:             d.str("topic", true),
		QueueID:           d.int32("queueId", true),
		SetZeroIfNotFound: d.optBool("setZeroIfNotFound"),
		BrokerName:        d.str("bname", false),
	}
	return d.err
}

// UpdateConsumerOffsetRequest is the header of UPDATE_CONSUMER_OFFSET (15).
type UpdateConsumerOffsetRequest struct {
	ConsumerGroup string // required
	Topic         string // required
	QueueID       int32  // required
	CommitOffset  int64  // required
	BrokerName    string // "bname"; omitted when empty
}

// Encode returns the ext fields.
func (h *UpdateConsumerOffsetRequest) Encode() remoting.Fields {
	e := newFieldEncoder(5)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.int64("commitOffset", h.CommitOffset)
	e.strOpt("bname", h.BrokerName)
	return e.done()
}

// Decode reads the header from f.
func (h *UpdateConsumerOffsetRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "UpdateConsumerOffsetRequest"}
	*h = UpdateConsumerOffsetRequest{
		ConsumerGroup: d.str("consumerGroup", true),
		Topic:         d.str("topic", true),
		QueueID:       d.int32("queueId", true),
		CommitOffset:  d.int64("commitOffset", true),
		BrokerName:    d.str("bname", false),
	}
	return d.err
}

// SearchOffsetRequest is the header of SEARCH_OFFSET_BY_TIMESTAMP (29).
type SearchOffsetRequest struct {
	Topic        string // required
	QueueID      int32  // required
	Timestamp    int64  // required, ms
	BoundaryType string // J5: "lower" or "upper"; omitted when empty
	BrokerName   string // "bname"; omitted when empty
}

// Encode returns the ext fields.
func (h *SearchOffsetRequest) Encode() remoting.Fields {
	e := newFieldEncoder(5)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.int64("timestamp", h.Timestamp)
	e.strOpt("boundaryType", h.BoundaryType)
	e.strOpt("bname", h.BrokerName)
	return e.done()
}

// Decode reads the header from f.
func (h *SearchOffsetRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "SearchOffsetRequest"}
	*h = SearchOffsetRequest{
		Topic:        d.str("topic", true),
		QueueID:      d.int32("queueId", true),
		Timestamp:    d.int64("timestamp", true),
		BoundaryType: d.str("boundaryType", false),
		BrokerName:   d.str("bname", false),
	}
	return d.err
}

// GetMinOffsetRequest is the header of GET_MIN_OFFSET (31).
type GetMinOffsetRequest struct {
	Topic      string // required
	QueueID    int32  // required
	BrokerName string // "bname"; omitted when empty
}

// Encode returns the ext fields.
func (h *GetMinOffsetRequest) Encode() remoting.Fields {
	e := newFieldEncoder(3)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.strOpt("bname", h.BrokerName)
	return e.done()
}

// Decode reads the header from f.
func (h *GetMinOffsetRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "GetMinOffsetRequest"}
	*h = GetMinOffsetRequest{
		Topic:      d.str("topic", true),
		QueueID:    d.int32("queueId", true),
		BrokerName: d.str("bname", false),
	}
	return d.err
}

// GetMaxOffsetRequest is the header of GET_MAX_OFFSET (30).
type GetMaxOffsetRequest struct {
	Topic      string         // required
	QueueID    int32          // required
	Committed  Optional[bool] // J5; the broker reads unset as true
	BrokerName string         // "bname"; omitted when empty
}

// Encode returns the ext fields.
func (h *GetMaxOffsetRequest) Encode() remoting.Fields {
	e := newFieldEncoder(4)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.optBool("committed", h.Committed)
	e.strOpt("bname", h.BrokerName)
	return e.done()
}

// Decode reads the header from f.
func (h *GetMaxOffsetRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "GetMaxOffsetRequest"}
	*h = GetMaxOffsetRequest{
		Topic:      d.str("topic", true),
		QueueID:    d.int32("queueId", true),
		Committed:  d.optBool("committed"),
		BrokerName: d.str("bname", false),
	}
	return d.err
}

// QueryConsumerOffsetResponse is the header of a SUCCESS answer to
// QUERY_CONSUMER_OFFSET.
type QueryConsumerOffsetResponse struct {
	Offset int64 // required
}

// Encode returns the ext fields.
func (h *QueryConsumerOffsetResponse) Encode() remoting.Fields { return encodeOffset(h.Offset) }

// Decode reads the header from f.
func (h *QueryConsumerOffsetResponse) Decode(f remoting.Fields) error {
	return decodeOffset(f, "QueryConsumerOffsetResponse", &h.Offset)
}

// SearchOffsetResponse is the header of a SUCCESS answer to SEARCH_OFFSET_BY_TIMESTAMP.
type SearchOffsetResponse struct {
	Offset int64 // required
}

// Encode returns the ext fields.
func (h *SearchOffsetResponse) Encode() remoting.Fields { return encodeOffset(h.Offset) }

// Decode reads the header from f.
func (h *SearchOffsetResponse) Decode(f remoting.Fields) error {
	return decodeOffset(f, "SearchOffsetResponse", &h.Offset)
}

// GetMinOffsetResponse is the header of a SUCCESS answer to GET_MIN_OFFSET.
type GetMinOffsetResponse struct {
	Offset int64 // required
}

// Encode returns the ext fields.
func (h *GetMinOffsetResponse) Encode() remoting.Fields { return encodeOffset(h.Offset) }

// Decode reads the header from f.
func (h *GetMinOffsetResponse) Decode(f remoting.Fields) error {
	return decodeOffset(f, "GetMinOffsetResponse", &h.Offset)
}

// GetMaxOffsetResponse is the header of a SUCCESS answer to GET_MAX_OFFSET.
type GetMaxOffsetResponse struct {
	Offset int64 // required
}

// Encode returns the ext fields.
func (h *GetMaxOffsetResponse) Encode() remoting.Fields { return encodeOffset(h.Offset) }

// Decode reads the header from f.
func (h *GetMaxOffsetResponse) Decode(f remoting.Fields) error {
	return decodeOffset(f, "GetMaxOffsetResponse", &h.Offset)
}

func encodeOffset(offset int64) remoting.Fields {
	e := newFieldEncoder(1)
	e.int64("offset", offset)
	return e.done()
}

func decodeOffset(f remoting.Fields, header string, offset *int64) error {
	d := fieldDecoder{fields: f, header: header}
	*offset = d.int64("offset", true)
	return d.err
}
