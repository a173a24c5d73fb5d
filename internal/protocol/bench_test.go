package protocol

import (
	"testing"

	"github.com/rmqpush/rmqpush/remoting"
)

func BenchmarkPullMessageRequestEncode(b *testing.B) {
	h := PullMessageRequest{ConsumerGroup: "GoldenGroup", Topic: "GoldenTopic", QueueID: 3, QueueOffset: 1234567,
		MaxMsgNums: 32, SysFlag: PullSysFlagCommitOffset | PullSysFlagSuspend, CommitOffset: 1234500,
		SuspendTimeoutMillis: 15000, SubVersion: 1796009560930, ExpressionType: ExpressionTypeTag, BrokerName: "broker-a"}
	b.ReportAllocs()
	var f remoting.Fields
	for b.Loop() {
		f = h.Encode()
	}
	_ = f
}

func BenchmarkPullMessageResponseDecode(b *testing.B) {
	// As a 4.9.8 broker sends it (b_consume_retry 0019), in its hash-map order.
	f := remoting.Fields{{Key: "suggestWhichBrokerId", Value: "0"}, {Key: "maxOffset", Value: "1234599"},
		{Key: "nextBeginOffset", Value: "1234567"}, {Key: "minOffset", Value: "0"}}
	b.ReportAllocs()
	var h PullMessageResponse
	for b.Loop() {
		if err := h.Decode(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTopicRouteDataDecode(b *testing.B) {
	data := twoBrokerRoute().Encode(StyleFastjson)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var r TopicRouteData
	for b.Loop() {
		if err := r.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeartbeatDataEncode(b *testing.B) {
	sub := sampleSubscription()
	all, _ := BuildSubscription("%RETRY%GoldenGroup", "*")
	h := HeartbeatData{ClientID: "192.0.2.2@golden-c1", ProducerDataSet: []ProducerData{{GroupName: "CLIENT_INNER_PRODUCER"}},
		ConsumerDataSet: []ConsumerData{{GroupName: "GoldenGroup", ConsumeType: ConsumePassively, MessageModel: Clustering,
			ConsumeFromWhere: ConsumeFromFirstOffset, SubscriptionDataSet: []SubscriptionData{sub, all}}}}
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		out = h.Encode(StyleStandard)
	}
	b.SetBytes(int64(len(out)))
}

func BenchmarkParseRunningInfo(b *testing.B) {
	data := bodyCases()["ConsumerRunningInfo"].Encode(StyleFastjson)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseExtraInfo reads a POP handle as a 5.3.3 broker's answer makes it
// (golden p_pop_533), with a broker time and queue offset of today's sizes: once per
// acked message.
//
//	go test -run - -bench ParseExtraInfo -count 6 ./internal/protocol
func BenchmarkParseExtraInfo(b *testing.B) {
	const handle = "1283114 1796177259844 60000 2 0 broker-a 5 1283130"
	b.ReportAllocs()
	var e ExtraInfo
	for b.Loop() {
		var err error
		if e, err = ParseExtraInfo(handle); err != nil {
			b.Fatal(err)
		}
	}
	_ = e
}
