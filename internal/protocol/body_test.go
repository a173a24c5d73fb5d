package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

var allStyles = []Style{StyleStandard, StyleFastjson, StyleBrowserCompatible}

// body is what every body type implements.
type body interface {
	Encode(Style) []byte
	Decode([]byte) error
}

func twoBrokerRoute() *TopicRouteData {
	return &TopicRouteData{
		OrderTopicConf: "broker-a:4;broker-b:4",
		QueueDatas: []QueueData{
			{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: PermRead | PermWrite},
			{BrokerName: "broker-b", ReadQueueNums: 2, WriteQueueNums: 3, Perm: PermRead | PermWrite, TopicSysFlag: 1},
		},
		BrokerDatas: []BrokerData{
			{Cluster: "DefaultCluster", BrokerName: "broker-a",
				BrokerAddrs: map[int64]string{0: "127.0.0.1:10911", 1: "127.0.0.1:10921"}},
			{Cluster: "DefaultCluster", BrokerName: "broker-b", BrokerAddrs: map[int64]string{0: "127.0.0.2:10911"},
				ZoneName: "zone-é", EnableActingMaster: true},
		},
		FilterServerTable: map[string][]string{"127.0.0.1:10911": {"127.0.0.1:30000"}},
	}
}

var (
	qA0 = message.Queue{Topic: "t", BrokerName: "broker-a", QueueID: 0}
	qA1 = message.Queue{Topic: "t", BrokerName: "broker-a", QueueID: 1}
	qB0 = message.Queue{Topic: "%RETRY%g", BrokerName: "broker-b", QueueID: 0}
)

func sampleSubscription() SubscriptionData {
	sd, err := BuildSubscription("t", "TagA || 标签 || 😀")
	if err != nil {
		panic(err)
	}
	sd.SubVersion = 1796009560930
	return sd
}

// bodyCases are populated values of every body type.
func bodyCases() map[string]body {
	sub := sampleSubscription()
	return map[string]body{
		"TopicRouteData": twoBrokerRoute(),
		"HeartbeatData": &HeartbeatData{ClientID: "192.0.2.2@x", ProducerDataSet: []ProducerData{{GroupName: "p"}},
			ConsumerDataSet: []ConsumerData{{GroupName: "g", ConsumeType: ConsumePassively, MessageModel: Clustering,
				ConsumeFromWhere: ConsumeFromFirstOffset, SubscriptionDataSet: []SubscriptionData{sub}, UnitMode: true}}},
		"ConsumerIDList":     &ConsumerIDList{ConsumerIDList: []string{"a@1", "b@2"}},
		"LockBatchRequest":   &LockBatchRequest{ConsumerGroup: "g", ClientID: "c", OnlyThisBroker: true, MQSet: []message.Queue{qA0, qB0}},
		"UnlockBatchRequest": &UnlockBatchRequest{ConsumerGroup: "g", ClientID: "c", MQSet: []message.Queue{qA1}},
		"LockBatchResponse":  &LockBatchResponse{LockOKMQSet: []message.Queue{qA0, qA1}},
		"ConsumerRunningInfo": &ConsumerRunningInfo{
			Properties:      map[string]string{PropConsumeType: "CONSUME_PASSIVELY", PropConsumeOrderly: "false"},
			SubscriptionSet: []SubscriptionData{sub},
			MQTable: map[message.Queue]ProcessQueueInfo{
				qA0: {CommitOffset: 7, CachedMsgMinOffset: 1, CachedMsgMaxOffset: 3, CachedMsgCount: 3,
					CachedMsgSizeInMiB: 1, TransactionMsgMinOffset: 2, TransactionMsgMaxOffset: 4, TransactionMsgCount: 5,
					Locked: true, TryUnlockTimes: 6, LastLockTimestamp: 8, Dropped: true, LastPullTimestamp: 9,
					LastConsumeTimestamp: 10},
				qB0: {CommitOffset: 1},
			},
			StatusTable: map[string]ConsumeStatus{"t": {PullRT: 35.75, PullTPS: 2, ConsumeRT: 3.9375, ConsumeOKTPS: 1.6,
				ConsumeFailedTPS: 0.25, ConsumeFailedMsgs: 3}},
			Jstack: "goroutine 1 [running]:\n\tmain.go:1",
		},
		"ResetOffsetBody":    &ResetOffsetBody{OffsetTable: map[message.Queue]int64{qA0: 7, qA1: 0, qB0: -1}},
		"ConsumerStatusBody": &ConsumerStatusBody{MessageQueueTable: map[message.Queue]int64{qA0: 7, qB0: 3}, ConsumerTable: map[string]map[message.Queue]int64{"c@1": {qA1: 5}}},
		"ConsumeMessageDirectlyResult": &ConsumeMessageDirectlyResult{Order: true, AutoCommit: true,
			ConsumeResult: CRThrowException, Remark: "boom", SpentTimeMills: 12},
		"CheckClientConfigBody": &CheckClientConfigBody{ClientID: "c", Group: "g",
			SubscriptionData: SubscriptionData{Topic: "t", SubString: "a > 1", ExpressionType: ExpressionTypeSQL92,
				TagsSet: []string{}, CodeSet: []int32{}, SubVersion: 5}},
	}
}

func TestBodyRoundTrip(t *testing.T) {
	for name, b := range bodyCases() {
		for _, style := range allStyles {
			t.Run(name+"/"+style.String(), func(t *testing.T) {
				data := b.Encode(style)
				if style != StyleFastjson {
					require.True(t, json.Valid(data), "standard JSON: %s", data)
				}
				back := freshBody(b)
				require.NoError(t, back.Decode(data), string(data))
				require.Equal(t, b, back, string(data))
			})
		}
	}
}

// freshBody returns a new zero body of b's type.
func freshBody(b body) body {
	switch b.(type) {
	case *TopicRouteData:
		return &TopicRouteData{}
	case *HeartbeatData:
		return &HeartbeatData{}
	case *ConsumerIDList:
		return &ConsumerIDList{}
	case *LockBatchRequest:
		return &LockBatchRequest{}
	case *UnlockBatchRequest:
		return &UnlockBatchRequest{}
	case *LockBatchResponse:
		return &LockBatchResponse{}
	case *ConsumerRunningInfo:
		return &ConsumerRunningInfo{}
	case *ResetOffsetBody:
		return &ResetOffsetBody{}
	case *ConsumerStatusBody:
		return &ConsumerStatusBody{}
	case *ConsumeMessageDirectlyResult:
		return &ConsumeMessageDirectlyResult{}
	case *CheckClientConfigBody:
		return &CheckClientConfigBody{}
	}
	panic("unknown body type")
}

func TestBodyDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		b    body
		in   string
		msg  string
	}{
		{"route truncated", &TopicRouteData{}, `{"brokerDatas":[{"brokerAddrs":{0:"a"`, "offset 37"},
		{"route not an object", &TopicRouteData{}, `[1]`, "expected object, found array"},
		{"route broker id too large", &TopicRouteData{},
			`{"brokerDatas":[{"brokerAddrs":{99999999999999999999:"a"}}]}`, "offset 32: integer \"99999999999999999999\" out of int64 range"},
		{"route broker id not a number", &TopicRouteData{}, `{"brokerDatas":[{"brokerAddrs":{"x":"a"}}]}`,
			"brokerDatas: [0]: brokerAddrs: key: json: offset 32"},
		{"route perm not a number", &TopicRouteData{}, `{"queueDatas":[{"perm":"rw"}]}`, "queueDatas: [0]: perm: json: offset 23"},
		{"route too many queues", &TopicRouteData{}, `{"queueDatas":[{"readQueueNums":65537}]}`, "outside [0, 65536]"},
		{"route negative queues", &TopicRouteData{}, `{"queueDatas":[{"writeQueueNums":-1}]}`, "outside [0, 65536]"},
		{"route queues add up", &TopicRouteData{}, `{"queueDatas":[` + strings.Repeat(`{"readQueueNums":65536},`, 16) +
			`{"readQueueNums":1}]}`, "more than 1048576 queues"},
		{"heartbeat subVersion float", &HeartbeatData{},
			`{"consumerDataSet":[{"subscriptionDataSet":[{"subVersion":1.5}]}]}`, "subVersion: json: offset 58: expected an integer"},
		{"heartbeat codeSet out of range", &HeartbeatData{},
			`{"consumerDataSet":[{"subscriptionDataSet":[{"codeSet":[2147483648]}]}]}`, "out of int32 range"},
		{"heartbeat deep", &HeartbeatData{}, strings.Repeat(`{"a":`, 70), "nesting deeper than 64"},
		{"reset bad key", &ResetOffsetBody{}, `{"offsetTable":{"nope":1}}`, "message queue key \"nope\""},
		{"reset key not a queue", &ResetOffsetBody{}, `{"offsetTable":{1:1}}`, "expected message queue object, found number"},
		{"reset queueId string", &ResetOffsetBody{}, `{"offsetTable":{{"queueId":"x"}:1}}`, "queueId: json: offset 27"},
		{"reset offset not a number", &ResetOffsetBody{}, `{"offsetTable":[{"topic":"t","offset":true}]}`, "offset: json: offset 38"},
		{"running info bad float", &ConsumerRunningInfo{}, `{"statusTable":{"t":{"pullRT":"fast"}}}`, "t: pullRT: json: offset 30"},
		{"consume result unknown", &ConsumeMessageDirectlyResult{}, `{"consumeResult":"CR_MAYBE"}`, "\"CR_MAYBE\" is not a CMResult"},
		{"consume result ordinal", &ConsumeMessageDirectlyResult{}, `{"consumeResult":6}`, "ordinal 6 is not a CMResult"},
		{"lock set not array", &LockBatchRequest{}, `{"mqSet":{}}`, "mqSet: json: offset 9: expected array, found object"},
		{"empty body", &ConsumerIDList{}, ``, "offset 0: unexpected end of input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Decode([]byte(tt.in))
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.msg)
			require.True(t, strings.HasPrefix(err.Error(), "protocol: "), err.Error())
			var je *JSONError
			require.ErrorAs(t, err, &je)
		})
	}
}

func TestBodiesIgnoreUnknownFieldsAndOrder(t *testing.T) {
	var r TopicRouteData
	require.NoError(t, r.Decode([]byte(`{"topicQueueMappingByBroker":{"x":{"a":[1,{}]}},"queueDatas":[{"writeQueueNums":1,`+
		`"topicSynFlag":3,"perm":4,"brokerName":"b","readQueueNums":2,"extra":null}],"brokerDatas":null}`)))
	require.Equal(t, TopicRouteData{QueueDatas: []QueueData{{BrokerName: "b", ReadQueueNums: 2, WriteQueueNums: 1,
		Perm: 4, TopicSysFlag: 3}}}, r)

	var c ConsumeMessageDirectlyResult
	require.NoError(t, c.Decode([]byte(`{"consumeResult":"CR_LATER","spentTimeMills":"15"}`)))
	require.Equal(t, ConsumeMessageDirectlyResult{ConsumeResult: CRLater, SpentTimeMills: 15}, c)
	require.NoError(t, c.Decode([]byte(`{"consumeResult":1}`)))
	require.Equal(t, CRLater, c.ConsumeResult)
}

func TestRouteHelpers(t *testing.T) {
	r := twoBrokerRoute()
	r.QueueDatas = append(r.QueueDatas, QueueData{BrokerName: "broker-c", ReadQueueNums: 8, WriteQueueNums: 8,
		Perm: PermWrite}, QueueData{BrokerName: "broker-d", ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite})
	r.BrokerDatas = append(r.BrokerDatas, BrokerData{BrokerName: "broker-c", BrokerAddrs: map[int64]string{0: "c:1"}},
		BrokerData{BrokerName: "broker-d", BrokerAddrs: map[int64]string{2: "d:2", 1: "d:1"}})

	q := func(b string, id int32) message.Queue { return message.Queue{Topic: "T", BrokerName: b, QueueID: id} }
	require.Equal(t, []message.Queue{q("broker-a", 0), q("broker-a", 1), q("broker-a", 2), q("broker-a", 3),
		q("broker-b", 0), q("broker-b", 1), q("broker-d", 0)}, r.ReadableQueues("T"))
	// broker-d has no master: a producer skips it.
	require.Equal(t, []message.Queue{q("broker-a", 0), q("broker-a", 1), q("broker-a", 2), q("broker-a", 3),
		q("broker-b", 0), q("broker-b", 1), q("broker-b", 2), q("broker-c", 0), q("broker-c", 1), q("broker-c", 2),
		q("broker-c", 3), q("broker-c", 4), q("broker-c", 5), q("broker-c", 6), q("broker-c", 7)}, r.WritableQueues("T"))

	addr, ok := r.MasterAddr("broker-a")
	require.True(t, ok)
	require.Equal(t, "127.0.0.1:10911", addr)
	_, ok = r.MasterAddr("broker-d")
	require.False(t, ok)
	_, ok = r.MasterAddr("nope")
	require.False(t, ok)
	addr, ok = r.AnyAddr("broker-d")
	require.True(t, ok)
	require.Equal(t, "d:1", addr, "lowest id when there is no master")
	addr, ok = r.AnyAddr("broker-a")
	require.True(t, ok)
	require.Equal(t, "127.0.0.1:10911", addr)
	_, ok = r.AnyAddr("nope")
	require.False(t, ok)
	require.Empty(t, (&TopicRouteData{}).ReadableQueues("T"))
}

func TestRouteStyles(t *testing.T) {
	r := &TopicRouteData{
		QueueDatas:  []QueueData{{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
		BrokerDatas: []BrokerData{{Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerAddrs: map[int64]string{0: "127.0.0.1:10911"}}},
	}
	quirky := r.Encode(StyleFastjson)
	require.Equal(t, `{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}],`+
		`"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`,
		string(quirky))
	var strict any
	require.Error(t, json.Unmarshal(quirky, &strict), "encoding/json must reject the fastjson form, or this test shows nothing")
	require.NoError(t, json.Unmarshal(r.Encode(StyleBrowserCompatible), &strict))

	var back TopicRouteData
	require.NoError(t, back.Decode(quirky))
	require.Equal(t, r.QueueDatas, back.QueueDatas)
	require.Equal(t, r.BrokerDatas, back.BrokerDatas)
}

func TestResetOffsetListForm(t *testing.T) {
	b := &ResetOffsetBody{OffsetTable: map[message.Queue]int64{qA1: 5, qA0: 7}}
	require.Equal(t, `{"offsetTable":[{"brokerName":"broker-a","offset":7,"queueId":0,"topic":"t"},`+
		`{"brokerName":"broker-a","offset":5,"queueId":1,"topic":"t"}]}`, string(b.EncodeList(StyleStandard)))
	require.Equal(t, `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"t"}:7,`+
		`{"brokerName":"broker-a","queueId":1,"topic":"t"}:5}}`, string(b.Encode(StyleFastjson)))
}

func TestConsumeDirectlyEncode(t *testing.T) {
	r := &ConsumeMessageDirectlyResult{AutoCommit: true, ConsumeResult: CRSuccess}
	require.Equal(t, `{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,"spentTimeMills":0}`,
		string(r.Encode(StyleStandard)))
	require.Equal(t, "CMResult(9)", CMResult(9).String())
}

func TestBuildSubscription(t *testing.T) {
	tests := []struct {
		name, expr string
		want       SubscriptionData
		err        string
	}{
		{"empty is all", "", SubscriptionData{Topic: "t", SubString: "*"}, ""},
		{"star", "*", SubscriptionData{Topic: "t", SubString: "*"}, ""},
		{"one tag", "TagA", SubscriptionData{Topic: "t", SubString: "TagA", TagsSet: []string{"TagA"},
			CodeSet: []int32{2598919}}, ""},
		{"tags trimmed", " TagA ||TagZ\t|| ", SubscriptionData{Topic: "t", SubString: " TagA ||TagZ\t|| ",
			TagsSet: []string{"TagA", "TagZ"}, CodeSet: []int32{2598919, 2598944}}, ""},
		{"duplicates and empty parts", "a||||a|| b", SubscriptionData{Topic: "t", SubString: "a||||a|| b",
			TagsSet: []string{"a", "b"}, CodeSet: []int32{97, 98}}, ""},
		{"hash collision keeps both tags", "Aa||BB", SubscriptionData{Topic: "t", SubString: "Aa||BB",
			TagsSet: []string{"Aa", "BB"}, CodeSet: []int32{2112}}, ""},
		{"single pipe is part of a tag", "a|b", SubscriptionData{Topic: "t", SubString: "a|b",
			TagsSet: []string{"a|b"}, CodeSet: []int32{JavaStringHash("a|b")}}, ""},
		{"non-ASCII", "标签 || 😀", SubscriptionData{Topic: "t", SubString: "标签 || 😀",
			TagsSet: []string{"标签", "😀"}, CodeSet: []int32{857175, 1772899}}, ""},
		{"only blanks", "  ", SubscriptionData{Topic: "t", SubString: "  "}, ""},
		{"only separators", "||||", SubscriptionData{}, "has no tags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildSubscription("t", tt.expr)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			want := tt.want
			want.ExpressionType = ExpressionTypeTag
			if want.TagsSet == nil {
				want.TagsSet, want.CodeSet = []string{}, []int32{}
			}
			require.Equal(t, want, got)
		})
	}
}

func TestBuildSubscriptionOfType(t *testing.T) {
	sd, err := BuildSubscriptionOfType("t", ExpressionTypeSQL92, "a > 1 AND b = 'x'")
	require.NoError(t, err)
	require.Equal(t, SubscriptionData{Topic: "t", SubString: "a > 1 AND b = 'x'", ExpressionType: ExpressionTypeSQL92,
		TagsSet: []string{}, CodeSet: []int32{}}, sd)
	_, err = BuildSubscriptionOfType("t", ExpressionTypeSQL92, "")
	require.ErrorContains(t, err, "SQL92 expression")
	_, err = BuildSubscriptionOfType("t", "XPATH", "x")
	require.ErrorContains(t, err, `unknown expression type "XPATH"`)
	sd, err = BuildSubscriptionOfType("t", "", "a||b")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, sd.TagsSet)
}

// Expected values computed by hand from the definition h = 31*h + unit over UTF-16
// code units, in 32-bit arithmetic. For example "标签" = U+6807 U+7B7E:
// 0x6807*31 + 0x7B7E = 26631*31 + 31614 = 857175; "😀" = U+1F600 = D83D DE00:
// 55357*31 + 56832 = 1772899.
func TestJavaStringHash(t *testing.T) {
	tests := []struct {
		in   string
		want int32
	}{
		{"", 0},
		{"a", 97},
		{"TagA", 2598919}, // ((84*31+97)*31+103)*31+65
		{"TagZ", 2598944},
		{"Aa", 2112},
		{"BB", 2112},
		{"é", 233},
		{"中", 20013},
		{"标签", 857175},
		{"😀", 1772899},
		{"a😀", 1866116},                     // (97*31+55357)*31+56832
		{"polygenelubricants", -2147483648}, // wraps to Integer.MIN_VALUE
		{"golden-tag-é😀", -1342108011},
		{"订单|支付", -711082958},
		{"\xff", 0xFFFD}, // not UTF-8: U+FFFD, as Java decodes it
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, JavaStringHash(tt.in), tt.in)
	}
}

// emptyAcks is a BatchAckRequest body with n empty acks ({}), each of which re-encodes
// to about 80 bytes and 19 JSON values.
func emptyAcks(n int) []byte {
	return []byte(`{"acks":[` + strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}`)
}

// A BatchAckRequest with more acks than any client sends is refused, naming the limit:
// before the limit, 110,377 empty acks (a 331 KB body) decoded into a request whose
// re-encoding held more than MaxValues values, so the decoder accepted what its own
// encoder could not round-trip (FuzzBatchAck's invariant).
func TestBatchAckRequestAckLimit(t *testing.T) {
	var b BatchAckRequest
	require.NoError(t, b.Decode(emptyAcks(maxBatchAcks)))
	require.Len(t, b.Acks, maxBatchAcks)
	var back BatchAckRequest
	require.NoError(t, back.Decode(b.Encode(StyleStandard)), "the largest accepted request round-trips")

	for _, n := range []int{maxBatchAcks + 1, (MaxValues-5)/19 + 1} {
		err := b.Decode(emptyAcks(n))
		require.ErrorContains(t, err, "acks: json: offset 8: more than 4096 acks", "%d acks", n)
		var je *JSONError
		require.ErrorAs(t, err, &je)
	}
}

// Set refuses what a bit set cannot hold or a peer would refuse, instead of panicking
// (a negative shift) or growing without bound: a handle's offset comes from a broker.
func TestBatchAckSetBounds(t *testing.T) {
	var a BatchAck
	require.True(t, a.Set(0))
	require.True(t, a.Set(maxBatchAckBits-1))
	require.False(t, a.Set(-1))
	require.False(t, a.Set(maxBatchAckBits))
	require.False(t, a.Set(1<<40))
	require.Len(t, a.Bits, maxBatchAckBits/64)
	require.Equal(t, []int64{0, maxBatchAckBits - 1}, a.Offsets())
}
