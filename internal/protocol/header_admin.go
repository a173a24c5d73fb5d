package protocol

import "github.com/rmqpush/rmqpush/remoting"

// Topic filter types of CreateTopicRequest.
const (
	TopicFilterSingleTag = "SINGLE_TAG"
	TopicFilterMultiTag  = "MULTI_TAG"
)

// CreateTopicRequest is the header of UPDATE_AND_CREATE_TOPIC (17).
type CreateTopicRequest struct {
	Topic           string // required
	DefaultTopic    string // required (normally "TBW102")
	ReadQueueNums   int32  // required
	WriteQueueNums  int32  // required
	Perm            int32  // required: Perm* bits
	TopicFilterType string // required: "SINGLE_TAG" or "MULTI_TAG"; Encode writes SINGLE_TAG for ""
	TopicSysFlag    int32  // always written
	Order           bool   // required
}

// Encode returns the ext fields.
func (h *CreateTopicRequest) Encode() remoting.Fields {
	e := newFieldEncoder(8)
	e.str("topic", h.Topic)
	e.str("defaultTopic", h.DefaultTopic)
	e.int32("readQueueNums", h.ReadQueueNums)
	e.int32("writeQueueNums", h.WriteQueueNums)
	e.int32("perm", h.Perm)
	filterType := h.TopicFilterType
	if filterType == "" {
		filterType = TopicFilterSingleTag // Java's TopicConfig default
	}
	e.str("topicFilterType", filterType)
	e.int32("topicSysFlag", h.TopicSysFlag)
	e.boolean("order", h.Order)
	return e.done()
}

// Decode reads the header from f. Like Java's checkFields, it rejects a topic filter
// type other than SINGLE_TAG and MULTI_TAG.
func (h *CreateTopicRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "CreateTopicRequest"}
	*h = CreateTopicRequest{
		Topic:           d.str("topic", true),
		DefaultTopic:    d.str("defaultTopic", true),
		ReadQueueNums:   d.int32("readQueueNums", true),
		WriteQueueNums:  d.int32("writeQueueNums", true),
		Perm:            d.int32("perm", true),
		TopicFilterType: d.str("topicFilterType", true),
		TopicSysFlag:    d.int32("topicSysFlag", false),
		Order:           d.boolean("order", true),
	}
	if d.err == nil && h.TopicFilterType != TopicFilterSingleTag && h.TopicFilterType != TopicFilterMultiTag {
		d.fail("topicFilterType", h.TopicFilterType, false, "topic filter type (SINGLE_TAG or MULTI_TAG)")
	}
	return d.err
}

// ViewMessageByIDRequest is the header of VIEW_MESSAGE_BY_ID (33).
type ViewMessageByIDRequest struct {
	Offset int64 // required: the commit-log offset
}

// Encode returns the ext fields.
func (h *ViewMessageByIDRequest) Encode() remoting.Fields { return encodeOffset(h.Offset) }

// Decode reads the header from f.
func (h *ViewMessageByIDRequest) Decode(f remoting.Fields) error {
	return decodeOffset(f, "ViewMessageByIDRequest", &h.Offset)
}
