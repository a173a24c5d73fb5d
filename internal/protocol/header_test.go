package protocol

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/remoting"
)

// headerCase is one header type with a fully populated value, the names of its
// required fields, and the fields that must parse as numbers or booleans.
type headerCase struct {
	name     string
	full     header // every field set to a non-zero value
	required []string
	numeric  []string
	bools    []string
}

func headerCases() []headerCase {
	return []headerCase{
		{"PullMessageRequest", &PullMessageRequest{ConsumerGroup: "g", Topic: "t", QueueID: 3, QueueOffset: 1 << 40,
			MaxMsgNums: 32, SysFlag: 7, CommitOffset: -2, SuspendTimeoutMillis: 15000, Subscription: "a || b",
			SubVersion: 1796009560930, ExpressionType: ExpressionTypeTag, MaxMsgBytes: 262144, BrokerName: "b"},
			[]string{"consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag", "commitOffset",
				"suspendTimeoutMillis", "subVersion"},
			[]string{"queueId", "queueOffset", "maxMsgNums", "sysFlag", "commitOffset", "suspendTimeoutMillis",
				"subVersion", "maxMsgBytes"}, nil},
		{"PullMessageResponse", &PullMessageResponse{SuggestWhichBrokerID: 1, NextBeginOffset: 9, MinOffset: -3,
			MaxOffset: 1 << 62, OffsetDelta: 5, TopicSysFlag: 1, GroupSysFlag: 2, ForbiddenType: 3},
			[]string{"suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset"},
			[]string{"suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset", "offsetDelta",
				"topicSysFlag", "groupSysFlag", "forbiddenType"}, nil},
		{"QueryConsumerOffsetRequest", &QueryConsumerOffsetRequest{ConsumerGroup: "g", Topic: "t", QueueID: 2,
			SetZeroIfNotFound: Some(false), BrokerName: "b"},
			[]string{"consumerGroup", "topic", "queueId"}, []string{"queueId"}, []string{"setZeroIfNotFound"}},
		{"QueryConsumerOffsetResponse", &QueryConsumerOffsetResponse{Offset: 42},
			[]string{"offset"}, []string{"offset"}, nil},
		{"UpdateConsumerOffsetRequest", &UpdateConsumerOffsetRequest{ConsumerGroup: "g", Topic: "t", QueueID: 1,
			CommitOffset: 77, BrokerName: "b"},
			[]string{"consumerGroup", "topic", "queueId", "commitOffset"}, []string{"queueId", "commitOffset"}, nil},
		{"SearchOffsetRequest", &SearchOffsetRequest{Topic: "t", QueueID: 1, Timestamp: 1796009560930,
			BoundaryType: "lower", BrokerName: "b"},
			[]string{"topic", "queueId", "timestamp"}, []string{"queueId", "timestamp"}, nil},
		{"SearchOffsetResponse", &SearchOffsetResponse{Offset: 5}, []string{"offset"}, []string{"offset"}, nil},
		{"GetMinOffsetRequest", &GetMinOffsetRequest{Topic: "t", QueueID: 4, BrokerName: "b"},
			[]string{"topic", "queueId"}, []string{"queueId"}, nil},
		{"GetMinOffsetResponse", &GetMinOffsetResponse{Offset: 1}, []string{"offset"}, []string{"offset"}, nil},
		{"GetMaxOffsetRequest", &GetMaxOffsetRequest{Topic: "t", QueueID: 4, Committed: Some(true), BrokerName: "b"},
			[]string{"topic", "queueId"}, []string{"queueId"}, []string{"committed"}},
		{"GetMaxOffsetResponse", &GetMaxOffsetResponse{Offset: 1}, []string{"offset"}, []string{"offset"}, nil},
		{"ConsumerSendMsgBackRequest", &ConsumerSendMsgBackRequest{Offset: 1800017389, Group: "g", DelayLevel: -1,
			OriginMsgID: "id", OriginTopic: "t", UnitMode: true, MaxReconsumeTimes: Some[int32](16), BrokerName: "b"},
			[]string{"offset", "group", "delayLevel"}, []string{"offset", "delayLevel", "maxReconsumeTimes"},
			[]string{"unitMode"}},
		{"SendMessageRequest", &SendMessageRequest{ProducerGroup: "p", Topic: "t", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: 1, SysFlag: 1, BornTimestamp: 1796009512916, Flag: 8,
			Properties: "TAGS\x01a\x02", ReconsumeTimes: 2, UnitMode: true, MaxReconsumeTimes: Some[int32](3),
			Batch: true, BrokerName: "b"},
			[]string{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
				"bornTimestamp", "flag"},
			[]string{"defaultTopicQueueNums", "queueId", "sysFlag", "bornTimestamp", "flag", "reconsumeTimes",
				"maxReconsumeTimes"}, []string{"unitMode", "batch"}},
		{"SendMessageRequestV2", &sendV2{SendMessageRequest{ProducerGroup: "p", Topic: "t", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: 1, SysFlag: 1, BornTimestamp: 1796009512916, Flag: 8,
			Properties: "TAGS\x01a\x02", ReconsumeTimes: 2, UnitMode: true, MaxReconsumeTimes: Some[int32](3),
			Batch: true, BrokerName: "b"}},
			[]string{"a", "b", "c", "d", "e", "f", "g", "h"},
			[]string{"d", "e", "f", "g", "h", "j", "l"}, []string{"k", "m"}},
		{"SendMessageResponse", &SendMessageResponse{MsgID: "X", QueueID: 1, QueueOffset: 3, TransactionID: "tx",
			MsgRegion: "DefaultRegion", TraceOn: Some(false)},
			[]string{"msgId", "queueId", "queueOffset"}, []string{"queueId", "queueOffset"}, []string{"TRACE_ON"}},
		{"UnregisterClientRequest", &UnregisterClientRequest{ClientID: "c", ProducerGroup: "p", ConsumerGroup: "g"},
			[]string{"clientID"}, nil, nil},
		{"GetConsumerListByGroupRequest", &GetConsumerListByGroupRequest{ConsumerGroup: "g"},
			[]string{"consumerGroup"}, nil, nil},
		{"NotifyConsumerIDsChangedRequest", &NotifyConsumerIDsChangedRequest{ConsumerGroup: "g"},
			[]string{"consumerGroup"}, nil, nil},
		{"GetRouteInfoRequest", &GetRouteInfoRequest{Topic: "t", AcceptStandardJSONOnly: true},
			[]string{"topic"}, nil, []string{"acceptStandardJsonOnly"}},
		{"ResetOffsetRequest", &ResetOffsetRequest{Topic: "t", Group: "g", Timestamp: -1, IsForce: true,
			QueueID: Some[int32](0), Offset: Some[int64](9)},
			[]string{"topic", "group", "timestamp", "isForce"}, []string{"timestamp", "queueId", "offset"},
			[]string{"isForce"}},
		{"GetConsumerStatusRequest", &GetConsumerStatusRequest{Topic: "t", Group: "g", ClientAddr: "a"},
			[]string{"topic", "group"}, nil, nil},
		{"GetConsumerRunningInfoRequest", &GetConsumerRunningInfoRequest{ConsumerGroup: "g", ClientID: "c",
			JstackEnable: true}, []string{"consumerGroup", "clientId"}, nil, []string{"jstackEnable"}},
		{"ConsumeMessageDirectlyRequest", &ConsumeMessageDirectlyRequest{ConsumerGroup: "g", ClientID: "c",
			MsgID: "m", BrokerName: "b"}, []string{"consumerGroup"}, nil, nil},
		{"HeartbeatResponse", &HeartbeatResponse{SupportHeartbeatV2: true, SubChange: true}, nil, nil,
			[]string{"IS_SUPPORT_HEART_BEAT_V2", "IS_SUB_CHANGE"}},
		{"CreateTopicRequest", &CreateTopicRequest{Topic: "t", DefaultTopic: "TBW102", ReadQueueNums: 4,
			WriteQueueNums: 4, Perm: 6, TopicFilterType: TopicFilterMultiTag, TopicSysFlag: 1, Order: true},
			[]string{"topic", "defaultTopic", "readQueueNums", "writeQueueNums", "perm", "topicFilterType", "order"},
			[]string{"readQueueNums", "writeQueueNums", "perm", "topicSysFlag"}, []string{"order"}},
		{"ViewMessageByIDRequest", &ViewMessageByIDRequest{Offset: 1800016616}, []string{"offset"},
			[]string{"offset"}, nil},
		{"PopMessageRequest", &PopMessageRequest{PollTime: 15000, InvisibleTime: 60000, QueueID: -1,
			BornTime: 1796177259829, MaxMsgNums: 32, BrokerName: "b", Topic: "t", ExpType: "TAG", Exp: "a || b",
			ConsumerGroup: "g", InitMode: InitModeMax, Order: true, AttemptID: "x"},
			[]string{"pollTime", "invisibleTime", "queueId", "bornTime", "maxMsgNums", "topic", "consumerGroup", "initMode"},
			[]string{"pollTime", "invisibleTime", "queueId", "bornTime", "maxMsgNums", "initMode"}, []string{"order"}},
		{"PopMessageResponse", &PopMessageResponse{InvisibleTime: 60000, StartOffsetInfo: "0 1 0", RestNum: 3,
			PopTime: 1796177259844, ReviveQID: 2, MsgOffsetInfo: "0 1 0,1", OrderCountInfo: "0 1 1"},
			[]string{"invisibleTime", "restNum", "popTime", "reviveQid"},
			[]string{"invisibleTime", "restNum", "popTime", "reviveQid"}, nil},
		{"AckMessageRequest", &AckMessageRequest{QueueID: 1, Offset: 3, BrokerName: "b", Topic: "t",
			ConsumerGroup: "g", ExtraInfo: "0 1796177259844 60000 0 0 b 1 3"},
			[]string{"queueId", "offset", "topic", "consumerGroup", "extraInfo"}, []string{"queueId", "offset"}, nil},
		{"ChangeInvisibleTimeRequest", &ChangeInvisibleTimeRequest{InvisibleTime: 10000, QueueID: 2, Offset: 1,
			BrokerName: "b", Topic: "t", ConsumerGroup: "g", ExtraInfo: "0 1796177259844 60000 0 0 b 2 1"},
			[]string{"invisibleTime", "queueId", "offset", "topic", "consumerGroup", "extraInfo"},
			[]string{"invisibleTime", "queueId", "offset"}, nil},
		{"ChangeInvisibleTimeResponse", &ChangeInvisibleTimeResponse{InvisibleTime: 10000, PopTime: 1796177259985,
			ReviveQID: 1}, []string{"invisibleTime", "popTime", "reviveQid"},
			[]string{"invisibleTime", "popTime", "reviveQid"}, nil},
	}
}

// fresh returns a new zero header of the same type as h.
func fresh(h header) header {
	return reflect.New(reflect.TypeOf(h).Elem()).Interface().(header)
}

func withField(f remoting.Fields, key, value string) remoting.Fields {
	out := append(remoting.Fields(nil), f...)
	out.Set(key, value)
	return out
}

func withoutField(f remoting.Fields, key string) remoting.Fields {
	out := append(remoting.Fields(nil), f...)
	out.Delete(key)
	return out
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, tc := range headerCases() {
		t.Run(tc.name, func(t *testing.T) {
			fields := tc.full.Encode()
			got := fresh(tc.full)
			require.NoError(t, got.Decode(fields))
			require.Equal(t, tc.full, got)
			// Decoding resets what a previous Decode left.
			require.NoError(t, got.Decode(fresh(tc.full).Encode()))
			require.Equal(t, fresh(tc.full).Encode(), got.Encode())
		})
	}
}

func TestHeaderZeroValueRoundTrip(t *testing.T) {
	for _, tc := range headerCases() {
		t.Run(tc.name, func(t *testing.T) {
			zero := fresh(tc.full)
			got := fresh(tc.full)
			require.NoError(t, got.Decode(zero.Encode()))
			// Equal but for defaults Encode fills in (CreateTopicRequest's filter type).
			require.Equal(t, zero.Encode(), got.Encode())
		})
	}
}

func TestHeaderMissingRequiredField(t *testing.T) {
	for _, tc := range headerCases() {
		for _, field := range tc.required {
			t.Run(tc.name+"/"+field, func(t *testing.T) {
				err := fresh(tc.full).Decode(withoutField(tc.full.Encode(), field))
				var he *HeaderError
				require.ErrorAs(t, err, &he)
				require.True(t, he.Missing)
				require.Contains(t, he.Field, field)
				require.Contains(t, err.Error(), field)
				require.Contains(t, err.Error(), "missing")
			})
		}
	}
}

func TestHeaderBadValues(t *testing.T) {
	bad := map[string][]string{
		"number":  {"", "x", "1.5", "12x", " 1", "0x10", "99999999999999999999"},
		"boolean": {"", "yes", "1", "t", "truee"},
	}
	for _, tc := range headerCases() {
		for kind, fields := range map[string][]string{"number": tc.numeric, "boolean": tc.bools} {
			for _, field := range fields {
				for _, v := range bad[kind] {
					t.Run(tc.name+"/"+field+"="+v, func(t *testing.T) {
						err := fresh(tc.full).Decode(withField(tc.full.Encode(), field, v))
						var he *HeaderError
						require.ErrorAs(t, err, &he)
						require.False(t, he.Missing)
						require.Equal(t, field, he.Field)
						require.Equal(t, v, he.Value)
						require.Contains(t, err.Error(), tc.name)
						require.Contains(t, err.Error(), field)
					})
				}
			}
		}
	}
}

func TestHeaderInt32Range(t *testing.T) {
	h := &PullMessageRequest{ConsumerGroup: "g", Topic: "t"}
	err := (&PullMessageRequest{}).Decode(withField(h.Encode(), "queueId", "2147483648"))
	var he *HeaderError
	require.ErrorAs(t, err, &he)
	require.Equal(t, "int32", he.Want)
	require.NoError(t, (&PullMessageRequest{}).Decode(withField(h.Encode(), "queueId", "-2147483648")))
}

func TestHeaderJavaBooleans(t *testing.T) {
	for _, v := range []string{"true", "TRUE", "True", "false", "FALSE", "False"} {
		var h GetConsumerRunningInfoRequest
		require.NoError(t, h.Decode(remoting.Fields{{Key: "consumerGroup", Value: "g"}, {Key: "clientId", Value: "c"},
			{Key: "jstackEnable", Value: v}}), v)
		require.Equal(t, v[0] == 't' || v[0] == 'T', h.JstackEnable, v)
	}
}

func TestPullMessageRequestEncodeOrder(t *testing.T) {
	h := PullMessageRequest{ConsumerGroup: "GoldenJavaPullGroup", Topic: "GoldenLongPollTopic", MaxMsgNums: 4,
		SysFlag: 6, SuspendTimeoutMillis: 8000, Subscription: "*", ExpressionType: "TAG", BrokerName: "broker-a"}
	var keys []string
	for _, f := range h.Encode() {
		keys = append(keys, f.Key)
	}
	// Java 4.9.8's order, from golden g_java_binary_longpoll 0017 (less ReqT, an RPC hook's field).
	require.Equal(t, []string{"consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag",
		"commitOffset", "suspendTimeoutMillis", "subscription", "subVersion", "expressionType", "bname"}, keys)
}

func TestSendMessageV2FallsBackToLongNames(t *testing.T) {
	long := (&SendMessageRequest{ProducerGroup: "p", Topic: "t", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		BornTimestamp: 1, BrokerName: "b"}).Encode()
	long.Set("brokerName", "b") // the V2 decoder's fallback for "n" is brokerName, as in Java
	var h SendMessageRequest
	require.NoError(t, h.DecodeFor(RequestSendMessageV2, long))
	require.Equal(t, "p", h.ProducerGroup)
	require.Equal(t, "b", h.BrokerName)

	err := h.DecodeV2(remoting.Fields{{Key: "b", Value: "t"}})
	var he *HeaderError
	require.ErrorAs(t, err, &he)
	require.Equal(t, "a/producerGroup", he.Field)

	long.Set("queueId", "x") // a bad value is named by the key it was read from
	err = h.DecodeV2(long)
	require.ErrorAs(t, err, &he)
	require.Equal(t, "queueId", he.Field)
	require.Equal(t, "x", he.Value)

	require.Equal(t, "a", h.EncodeFor(RequestSendBatchMessage)[0].Key)
	require.Equal(t, "producerGroup", h.EncodeFor(RequestSendMessage)[0].Key)
}

func TestCreateTopicRejectsUnknownFilterType(t *testing.T) {
	f := (&CreateTopicRequest{Topic: "t", DefaultTopic: "d", TopicFilterType: "SINGLE_TAG"}).Encode()
	f.Set("topicFilterType", "NONE")
	err := (&CreateTopicRequest{}).Decode(f)
	var he *HeaderError
	require.ErrorAs(t, err, &he)
	require.Equal(t, "topicFilterType", he.Field)
}

func TestHeaderEncodeShape(t *testing.T) {
	tests := []struct {
		name string
		h    header
		want remoting.Fields
	}{
		{"optional fields omitted", &PullMessageRequest{ConsumerGroup: "g", Topic: "t", QueueID: 1, QueueOffset: 2,
			MaxMsgNums: 32, SysFlag: 3, CommitOffset: 4, SuspendTimeoutMillis: 15000, SubVersion: 5},
			remoting.Fields{{Key: "consumerGroup", Value: "g"}, {Key: "topic", Value: "t"}, {Key: "queueId", Value: "1"},
				{Key: "queueOffset", Value: "2"}, {Key: "maxMsgNums", Value: "32"}, {Key: "sysFlag", Value: "3"},
				{Key: "commitOffset", Value: "4"}, {Key: "suspendTimeoutMillis", Value: "15000"},
				{Key: "subVersion", Value: "5"}}},
		{"negative numbers", &PullMessageResponse{NextBeginOffset: -1, MinOffset: -9223372036854775808,
			MaxOffset: 9223372036854775807},
			remoting.Fields{{Key: "suggestWhichBrokerId", Value: "0"}, {Key: "nextBeginOffset", Value: "-1"},
				{Key: "minOffset", Value: "-9223372036854775808"}, {Key: "maxOffset", Value: "9223372036854775807"}}},
		{"booleans", &ResetOffsetRequest{Topic: "t", Group: "g", Timestamp: -1},
			remoting.Fields{{Key: "topic", Value: "t"}, {Key: "group", Value: "g"}, {Key: "timestamp", Value: "-1"},
				{Key: "isForce", Value: "false"}}},
		{"4.9 heartbeat answer has no fields", &HeartbeatResponse{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.h.Encode())
		})
	}
}
