package protocol

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/remoting"
)

// header is what every typed header implements.
type header interface {
	Encode() remoting.Fields
	Decode(remoting.Fields) error
}

// sendV2 adapts SendMessageRequest to the short names.
type sendV2 struct{ SendMessageRequest }

func (h *sendV2) Encode() remoting.Fields        { return h.EncodeV2() }
func (h *sendV2) Decode(f remoting.Fields) error { return h.DecodeV2(f) }

// headerForFrame returns the typed header a golden frame's ext fields hold, if any.
func headerForFrame(f *goldenFrame) header {
	if f.Kind != "response" {
		switch f.Code {
		case RequestSendMessage:
			return &SendMessageRequest{}
		case RequestSendMessageV2, RequestSendBatchMessage:
			return &sendV2{}
		case RequestPullMessage:
			return &PullMessageRequest{}
		case RequestQueryConsumerOffset:
			return &QueryConsumerOffsetRequest{}
		case RequestUpdateConsumerOffset:
			return &UpdateConsumerOffsetRequest{}
		case RequestUpdateAndCreateTopic:
			return &CreateTopicRequest{}
		case RequestSearchOffsetByTimestamp:
			return &SearchOffsetRequest{}
		case RequestGetMaxOffset:
			return &GetMaxOffsetRequest{}
		case RequestGetMinOffset:
			return &GetMinOffsetRequest{}
		case RequestViewMessageByID:
			return &ViewMessageByIDRequest{}
		case RequestUnregisterClient:
			return &UnregisterClientRequest{}
		case RequestConsumerSendMsgBack:
			return &ConsumerSendMsgBackRequest{}
		case RequestGetConsumerListByGroup:
			return &GetConsumerListByGroupRequest{}
		case RequestNotifyConsumerIDsChanged:
			return &NotifyConsumerIDsChangedRequest{}
		case RequestGetRouteInfoByTopic:
			return &GetRouteInfoRequest{}
		case RequestResetConsumerClientOffset, RequestInvokeBrokerToResetOffset:
			return &ResetOffsetRequest{}
		case RequestGetConsumerRunningInfo:
			return &GetConsumerRunningInfoRequest{}
		case RequestConsumeMessageDirectly:
			return &ConsumeMessageDirectlyRequest{}
		}
		return nil
	}
	switch {
	case f.RequestName == "PULL_MESSAGE" && (f.Code == ResponseSuccess || f.Code == ResponsePullNotFound ||
		f.Code == ResponsePullRetryImmediately || f.Code == ResponsePullOffsetMoved):
		return &PullMessageResponse{}
	case f.RequestName == "QUERY_CONSUMER_OFFSET" && f.Code == ResponseSuccess:
		return &QueryConsumerOffsetResponse{}
	case f.RequestName == "GET_MAX_OFFSET" && f.Code == ResponseSuccess:
		return &GetMaxOffsetResponse{}
	case (f.RequestName == "SEND_MESSAGE" || f.RequestName == "SEND_MESSAGE_V2" ||
		f.RequestName == "SEND_BATCH_MESSAGE") && f.Code == ResponseSuccess:
		return &SendMessageResponse{}
	case f.RequestName == "HEART_BEAT":
		return &HeartbeatResponse{}
	}
	return nil
}

// notHeaderFields are ext fields that RPC hooks add, not part of any typed header.
var notHeaderFields = map[string]bool{"AccessKey": true, "Signature": true, "ReqT": true}

// TestGoldenHeaders decodes the ext fields of every golden frame that carries a typed
// header, re-encodes them and compares the field sets. The only differences allowed:
// fields added by RPC hooks, and empty nullable strings, which Encode omits.
func TestGoldenHeaders(t *testing.T) {
	frames := loadGolden(t)
	seen := map[string]int{}
	for _, f := range frames {
		h := headerForFrame(f)
		if h == nil {
			continue
		}
		typ := fmt.Sprintf("%T", h)
		seen[typ]++
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			require.NoError(t, h.Decode(f.fields()), "ext fields %v", f.ExtFields)
			got := map[string]string{}
			for _, e := range h.Encode() {
				_, dup := got[e.Key]
				require.False(t, dup, "field %q encoded twice", e.Key)
				got[e.Key] = e.Value
			}
			for k, v := range f.ExtFields {
				if notHeaderFields[k] {
					continue
				}
				if g, ok := got[k]; ok {
					require.Equal(t, v, g, "field %q", k)
				} else {
					require.Empty(t, v, "field %q (%q) lost by re-encoding", k, v)
				}
			}
			for k := range got {
				_, ok := f.ExtFields[k]
				require.True(t, ok, "field %q not in the golden frame %v", k, sortedFieldKeys(f.ExtFields))
			}
		})
	}
	for _, typ := range []string{
		"*protocol.SendMessageRequest", "*protocol.sendV2", "*protocol.PullMessageRequest",
		"*protocol.QueryConsumerOffsetRequest", "*protocol.UpdateConsumerOffsetRequest",
		"*protocol.CreateTopicRequest", "*protocol.GetMaxOffsetRequest", "*protocol.ViewMessageByIDRequest",
		"*protocol.UnregisterClientRequest", "*protocol.ConsumerSendMsgBackRequest",
		"*protocol.GetConsumerListByGroupRequest", "*protocol.NotifyConsumerIDsChangedRequest",
		"*protocol.GetRouteInfoRequest", "*protocol.ResetOffsetRequest", "*protocol.GetConsumerRunningInfoRequest",
		"*protocol.ConsumeMessageDirectlyRequest", "*protocol.PullMessageResponse",
		"*protocol.QueryConsumerOffsetResponse", "*protocol.GetMaxOffsetResponse", "*protocol.SendMessageResponse",
		"*protocol.HeartbeatResponse",
	} {
		require.Positive(t, seen[typ], "no golden frame exercised %s", typ)
	}
}

// TestGoldenHeaderValues checks decoded values of selected golden frames.
func TestGoldenHeaderValues(t *testing.T) {
	frames := loadGolden(t)
	tests := []struct {
		scenario, file string
		got            header
		want           header
	}{
		{"b_consume_retry", "0017-", &PullMessageRequest{}, &PullMessageRequest{
			ConsumerGroup: "GoldenGroup", Topic: "GoldenTopic", QueueID: 0, QueueOffset: 0, MaxMsgNums: 32,
			SysFlag: PullSysFlagSuspend, CommitOffset: 0, SuspendTimeoutMillis: 20000, SubVersion: 0,
			ExpressionType: "TAG", BrokerName: "broker-a"}},
		{"g_java_binary_longpoll", "0017-", &PullMessageRequest{}, &PullMessageRequest{
			ConsumerGroup: "GoldenJavaPullGroup", Topic: "GoldenLongPollTopic", MaxMsgNums: 4,
			SysFlag: PullSysFlagSuspend | PullSysFlagSubscription, SuspendTimeoutMillis: 8000,
			Subscription: "*", ExpressionType: "TAG", BrokerName: "broker-a"}},
		{"b_consume_retry", "0019-", &PullMessageResponse{}, &PullMessageResponse{
			NextBeginOffset: 7, MinOffset: 0, MaxOffset: 7}},
		{"b_consume_retry", "0015-", &QueryConsumerOffsetResponse{}, &QueryConsumerOffsetResponse{Offset: 0}},
		{"d2_consume_directly", "0015-", &QueryConsumerOffsetResponse{}, &QueryConsumerOffsetResponse{Offset: 7}},
		{"b_consume_retry", "0014-", &QueryConsumerOffsetRequest{}, &QueryConsumerOffsetRequest{
			ConsumerGroup: "GoldenGroup", Topic: "GoldenTopic", BrokerName: "broker-a"}},
		{"b_consume_retry", "0040-", &UpdateConsumerOffsetRequest{}, &UpdateConsumerOffsetRequest{
			ConsumerGroup: "GoldenGroup", Topic: "GoldenTopic", CommitOffset: 7, BrokerName: "broker-a"}},
		{"b_consume_retry", "0032-", &ConsumerSendMsgBackRequest{}, &ConsumerSendMsgBackRequest{
			Offset: 1800017389, Group: "GoldenGroup", DelayLevel: 0, OriginMsgID: "C00002027B2300000000961a64400007",
			OriginTopic: "GoldenTopic", MaxReconsumeTimes: Some[int32](16), BrokerName: "broker-a"}},
		{"b_consume_retry", "0117-", &UnregisterClientRequest{}, &UnregisterClientRequest{
			ClientID: "192.0.2.2@golden-java-c2", ConsumerGroup: "GoldenGroup"}},
		{"a_produce", "0005-", &CreateTopicRequest{}, &CreateTopicRequest{
			Topic: "GoldenTopic", DefaultTopic: "TBW102", ReadQueueNums: 4, WriteQueueNums: 4,
			Perm: PermRead | PermWrite, TopicFilterType: TopicFilterSingleTag}},
		{"a_produce", "0014-", &SendMessageResponse{}, &SendMessageResponse{
			MsgID: "7F00000100002A9F000000006B4A0FF8", QueueID: 1, QueueOffset: 0, MsgRegion: "DefaultRegion",
			TraceOn: Some(true)}},
		{"g_java_binary_longpoll", "0027-", &sendV2{}, &sendV2{SendMessageRequest{
			ProducerGroup: "GoldenJavaProducerGroup", Topic: "GoldenLongPollTopic", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, BornTimestamp: 1796009819457,
			Properties: "KEYS\x01golden-java-key\x02goldenSource\x01java\x02UNIQ_KEY\x01C000020205474E0E2F2A961F15400000\x02WAIT\x01true\x02TAGS\x01TagJava",
			BrokerName: "broker-a"}}},
		{"a_produce", "0047-", &sendV2{}, &sendV2{SendMessageRequest{
			ProducerGroup: "GoldenProducerGroup", Topic: "GoldenTopic", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, BornTimestamp: 1796009512954, MaxReconsumeTimes: Some[int32](0),
			Batch: true, BrokerName: "broker-a"}}},
		{"g_java_binary_longpoll", "0015-", &GetMaxOffsetRequest{}, &GetMaxOffsetRequest{
			Topic: "GoldenLongPollTopic", BrokerName: "broker-a"}},
		{"d_admin_running_consumer", "0093-", &ResetOffsetRequest{}, &ResetOffsetRequest{
			Topic: "GoldenTopic", Group: "GoldenGroup", Timestamp: -1}},
		{"d_admin_running_consumer", "0091-", &ResetOffsetRequest{}, &ResetOffsetRequest{
			Topic: "GoldenTopic", Group: "GoldenGroup", Timestamp: -1, IsForce: true}},
		{"d_admin_running_consumer", "0056-", &GetConsumerRunningInfoRequest{}, &GetConsumerRunningInfoRequest{
			ConsumerGroup: "GoldenGroup", ClientID: "192.0.2.2@golden-admin-target"}},
		{"d2_consume_directly", "0050-", &ConsumeMessageDirectlyRequest{}, &ConsumeMessageDirectlyRequest{
			ConsumerGroup: "GoldenGroup", ClientID: "192.0.2.2@golden-direct-target",
			MsgID: "7F00000200002A9F000000006B4A12E8", BrokerName: "broker-a"}},
		{"b_consume_retry", "0010-", &NotifyConsumerIDsChangedRequest{}, &NotifyConsumerIDsChangedRequest{
			ConsumerGroup: "GoldenGroup"}},
		{"b_consume_retry", "0001-", &GetRouteInfoRequest{}, &GetRouteInfoRequest{Topic: "GoldenTopic"}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.file, func(t *testing.T) {
			f := goldenFrameByFile(t, frames, tt.scenario, tt.file)
			require.NoError(t, tt.got.Decode(f.fields()))
			require.Equal(t, tt.want, tt.got)
		})
	}

	t.Run("a_produce/0013-/SEND_MESSAGE V1 from Go", func(t *testing.T) {
		f := goldenFrameByFile(t, frames, "a_produce", "0013-")
		var h SendMessageRequest
		require.NoError(t, h.DecodeFor(f.Code, f.fields()))
		require.Equal(t, "GoldenProducerGroup", h.ProducerGroup)
		require.Equal(t, "GoldenAutoTopic", h.Topic)
		require.Equal(t, int32(1), h.QueueID)
		require.Equal(t, int64(1796009512916), h.BornTimestamp)
		require.Equal(t, Some[int32](0), h.MaxReconsumeTimes)
		require.Equal(t, "broker-a", h.BrokerName)
		require.Contains(t, h.Properties, "TAGS\x01TagAuto\x02")
	})

	t.Run("SUBSCRIPTION_NOT_LATEST carries no pull header", func(t *testing.T) {
		f := goldenFrameByFile(t, frames, "d_admin_running_consumer", "0210-")
		var h PullMessageResponse
		err := h.Decode(f.fields())
		var he *HeaderError
		require.ErrorAs(t, err, &he)
		require.True(t, he.Missing)
		require.Equal(t, "suggestWhichBrokerId", he.Field)
	})
}
