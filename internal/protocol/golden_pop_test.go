package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// popHeaderForFrame returns the typed header of a golden 5.x POP frame, if any.
func popHeaderForFrame(f *goldenFrame) header {
	if f.Kind != "response" {
		switch f.Code {
		case RequestPopMessage:
			return &PopMessageRequest{}
		case RequestAckMessage:
			return &AckMessageRequest{}
		case RequestChangeMessageInvisibleTime:
			return &ChangeInvisibleTimeRequest{}
		}
		return nil
	}
	switch f.RequestCode {
	case RequestPopMessage:
		return &PopMessageResponse{}
	case RequestChangeMessageInvisibleTime:
		return &ChangeInvisibleTimeResponse{}
	}
	return nil
}

// TestGoldenPopHeaders decodes the ext fields of every POP_MESSAGE, ACK_MESSAGE and
// CHANGE_MESSAGE_INVISIBLETIME frame of the 5.3.3 captures, answers included, and
// re-encodes them: the same fields with the same values, in the same order.
func TestGoldenPopHeaders(t *testing.T) {
	seen := map[string]int{}
	for _, f := range loadGoldenFrom(t, goldenScenarios5x...) {
		h := popHeaderForFrame(f)
		if h == nil {
			continue
		}
		seen[f.Kind+" "+f.name()]++
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			require.NoError(t, h.Decode(f.fields()), "ext fields %v", f.ExtFields)
			require.Equal(t, f.fields(), h.Encode(), "re-encoded in the wire order")
		})
	}
	for _, k := range []string{"request POP_MESSAGE", "response POP_MESSAGE", "request ACK_MESSAGE",
		"request CHANGE_MESSAGE_INVISIBLETIME", "response CHANGE_MESSAGE_INVISIBLETIME"} {
		require.Positive(t, seen[k], k)
	}
	require.Equal(t, 20, seen["request ACK_MESSAGE"], "19 first deliveries and the retried one")
}

// TestGoldenPopMessageFields checks what the captured POP frames say (README-5x.md).
func TestGoldenPopMessageFields(t *testing.T) {
	frames := loadGoldenFrom(t, "p_pop_533")
	var req PopMessageRequest
	require.NoError(t, req.Decode(goldenFrameByFile(t, frames, "p_pop_533", "0079-").fields()))
	require.Equal(t, PopMessageRequest{PollTime: 15000, InvisibleTime: 60000, QueueID: -1, BornTime: 1796177259829,
		MaxMsgNums: 32, BrokerName: "broker-5a", Topic: "GoldenPopTopic", ExpType: "TAG", Exp: "*",
		ConsumerGroup: "GoldenPopGroup", InitMode: InitModeMin}, req)

	var timeout PopMessageResponse
	f := goldenFrameByFile(t, frames, "p_pop_533", "0156-")
	require.Equal(t, ResponsePollingTimeout, f.Code)
	require.Equal(t, "POLLING_TIMEOUT", ResponseName(f.Code))
	require.NoError(t, timeout.Decode(f.fields()))
	offs, err := ParsePopOffsets(timeout.StartOffsetInfo, timeout.MsgOffsetInfo)
	require.NoError(t, err)
	require.Empty(t, offs)

	var cit ChangeInvisibleTimeResponse
	f = goldenFrameByFile(t, frames, "p_pop_533", "0121-")
	require.Equal(t, "not set any response code", *f.Remark)
	require.NoError(t, cit.Decode(f.fields()))
	require.Equal(t, ChangeInvisibleTimeResponse{InvisibleTime: 10000, PopTime: 1796177259985, ReviveQID: 0}, cit)
}

// TestGoldenPopOffsets reads the offset infos of every POP_MESSAGE answer that found
// messages and checks them against the records of its body: one offset per record, in
// record order per queue, and Java's handles built from them equal the POP_CK the Java
// listener saw (consumed.json).
func TestGoldenPopOffsets(t *testing.T) {
	frames := loadGoldenFrom(t, "p_pop_533")
	seen := popCKsSeen(t)
	found := 0
	for _, f := range frames {
		if f.Kind != "response" || f.RequestCode != RequestPopMessage || f.Code != ResponseSuccess {
			continue
		}
		found++
		var h PopMessageResponse
		require.NoError(t, h.Decode(f.fields()))
		offs, err := ParsePopOffsets(h.StartOffsetInfo, h.MsgOffsetInfo)
		require.NoError(t, err)
		msgs, err := (&message.Decoder{}).DecodeAll(f.body(t))
		require.NoError(t, err)
		next := map[[2]int64]int{}
		n := 0
		for _, q := range offs {
			n += len(q.Offsets)
		}
		require.Equal(t, len(msgs), n, f.File)
		for _, m := range msgs {
			ck, hasCK := m.Properties.Get(PropertyPopCK)
			mark := TopicMark(m.Topic)
			if hasCK { // revived by the broker: its handle came with it
				e, err := ParseExtraInfo(ck)
				require.NoError(t, err)
				mark = e.TopicMark
			}
			q := offs.Find(mark, m.QueueID)
			require.NotNil(t, q, "%s: queue %c %d", f.File, mark, m.QueueID)
			k := [2]int64{int64(mark), int64(m.QueueID)}
			require.Equal(t, m.QueueOffset, q.Offsets[next[k]], "%s: offsets in record order", f.File)
			built := ExtraInfo{CkQueueOffset: q.StartOffset, PopTime: h.PopTime, InvisibleTime: h.InvisibleTime,
				ReviveQID: h.ReviveQID, TopicMark: mark, BrokerName: "broker-5a", QueueID: m.QueueID,
				QueueOffset: q.Offsets[next[k]]}.String()
			next[k]++
			if hasCK {
				require.Equal(t, built, ck, "the broker's handle of a revived message is the one Java would build")
			}
			require.Contains(t, seen[m.Properties.Value(message.PropertyUniqKey)], built, "%s: handle the Java listener saw", f.File)
		}
	}
	require.Equal(t, 2, found)
}

// popCKsSeen returns the POP_CK values the Java listener saw per UNIQ_KEY.
func popCKsSeen(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "p_pop_533", "consumed.json"))
	require.NoError(t, err)
	var consumed []struct {
		Properties map[string]string `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(data, &consumed))
	require.NotEmpty(t, consumed)
	out := map[string][]string{}
	for _, c := range consumed {
		out[c.Properties["UNIQ_KEY"]] = append(out[c.Properties["UNIQ_KEY"]], c.Properties[PropertyPopCK])
	}
	return out
}

// TestGoldenAckHandles checks every ack and invisibility change of the capture against
// its handle: the queue, offset and topic it names are the handle's (the POP retry
// topic for a retried message).
func TestGoldenAckHandles(t *testing.T) {
	n := 0
	for _, f := range loadGoldenFrom(t, "p_pop_533") {
		if f.Kind != "request" || (f.Code != RequestAckMessage && f.Code != RequestChangeMessageInvisibleTime) {
			continue
		}
		n++
		var (
			topic, group, extra string
			qid                 int32
			off                 int64
		)
		if f.Code == RequestAckMessage {
			var h AckMessageRequest
			require.NoError(t, h.Decode(f.fields()))
			topic, group, extra, qid, off = h.Topic, h.ConsumerGroup, h.ExtraInfo, h.QueueID, h.Offset
		} else {
			var h ChangeInvisibleTimeRequest
			require.NoError(t, h.Decode(f.fields()))
			topic, group, extra, qid, off = h.Topic, h.ConsumerGroup, h.ExtraInfo, h.QueueID, h.Offset
			require.Equal(t, int64(10000), h.InvisibleTime, "the first level of Java's popDelayLevel")
		}
		e, err := ParseExtraInfo(extra)
		require.NoError(t, err)
		require.Equal(t, extra, e.String())
		require.Equal(t, e.QueueID, qid)
		require.Equal(t, e.QueueOffset, off)
		require.Equal(t, e.RealTopic("GoldenPopTopic", group), topic)
		if e.TopicMark == TopicMarkRetry {
			require.Equal(t, "%RETRY%GoldenPopGroup_GoldenPopTopic", topic)
			require.Equal(t, "GoldenPopTopic", NormalTopic(topic, group))
		}
	}
	require.Equal(t, 21, n)
}

// TestGoldenQueryAssignment decodes the QUERY_ASSIGNMENT bodies of the captures and
// re-encodes them byte for byte.
func TestGoldenQueryAssignment(t *testing.T) {
	var reqs, pop, pull int
	for _, f := range loadGoldenFrom(t, goldenScenarios5x...) {
		if f.name() != "QUERY_ASSIGNMENT" {
			continue
		}
		body := f.body(t)
		if f.Kind == "request" {
			reqs++
			require.Empty(t, f.ExtFields)
			var b QueryAssignmentRequest
			require.NoError(t, b.Decode(body))
			require.Equal(t, Clustering, b.MessageModel)
			require.Equal(t, "AVG", b.StrategyName)
			require.Equal(t, string(body), string(b.Encode(StyleStandard)))
			continue
		}
		var b QueryAssignmentResponse
		require.NoError(t, b.Decode(body))
		require.False(t, b.Null)
		require.Len(t, b.Assignments, 1)
		a := b.Assignments[0]
		if strings.HasPrefix(a.Queue.Topic, "%RETRY%") {
			require.Equal(t, RequestModePull, a.Mode, "the group's retry topic stays PULL")
			pull++
		} else {
			require.Equal(t, RequestModePop, a.Mode)
			require.Equal(t, int32(-1), a.Queue.QueueID, "POP: any queue of the topic")
			pop++
		}
		require.Equal(t, string(body), string(b.Encode(StyleStandard)))
	}
	require.Positive(t, reqs)
	require.Positive(t, pop)
	require.Positive(t, pull)

	var null QueryAssignmentResponse
	require.NoError(t, null.Decode([]byte(`{}`)))
	require.True(t, null.Null)
	require.Equal(t, `{}`, string(null.Encode(StyleStandard)))
	var odd QueryAssignmentResponse
	require.NoError(t, odd.Decode([]byte(`{"messageQueueAssignments":[{"mode":"POP"},{"messageQueue":{"brokerName":"b","queueId":2,"topic":"t"},"mode":"BOGUS"}]}`)))
	require.Equal(t, []QueueAssignment{{Queue: message.Queue{Topic: "t", BrokerName: "b", QueueID: 2}, Mode: RequestModePull}}, odd.Assignments)
}

// TestGoldenSetMessageRequestMode decodes mqadmin setConsumeMode's body.
func TestGoldenSetMessageRequestMode(t *testing.T) {
	n := 0
	for _, f := range loadGoldenFrom(t, "p_pop_533", "p3_pop_rocketmq_533") {
		if f.Kind != "request" || f.Code != RequestSetMessageRequestMode {
			continue
		}
		n++
		var b SetMessageRequestModeRequest
		require.NoError(t, b.Decode(f.body(t)))
		require.Equal(t, RequestModePop, b.Mode)
		require.Equal(t, int32(8), b.PopShareQueueNum)
		require.Equal(t, f.BodyText, string(b.Encode(StyleStandard)))
	}
	require.Equal(t, 2, n)
	var b SetMessageRequestModeRequest
	require.Error(t, b.Decode([]byte(`{"mode":"PUSH"}`)))
}

// TestGolden5xHeartbeats decodes the 5.3.3 client's heartbeats: the two fields 5.x adds
// are read, and the body re-encodes byte for byte.
func TestGolden5xHeartbeats(t *testing.T) {
	n := 0
	for _, f := range loadGoldenFrom(t, goldenScenarios5x...) {
		if f.Kind != "request" || f.Code != RequestHeartBeat {
			continue
		}
		n++
		var h HeartbeatData
		require.NoError(t, h.Decode(f.body(t)))
		require.Equal(t, Some(int64(0)), h.HeartbeatFingerprint)
		require.Equal(t, Some(false), h.WithoutSub)
		require.Equal(t, f.BodyText, string(h.Encode(StyleFastjson)))
	}
	require.Positive(t, n)
	for _, f := range loadGoldenFrom(t, goldenScenarios5x...) {
		if f.Kind == "response" && f.RequestName == "HEART_BEAT" {
			var h HeartbeatResponse
			require.NoError(t, h.Decode(f.fields()))
			require.True(t, h.SupportHeartbeatV2 && h.SubChange)
		}
	}
}

// TestGolden5xCodeNames names every code of the 5.x captures as they are named there.
func TestGolden5xCodeNames(t *testing.T) {
	for _, f := range loadGoldenFrom(t, goldenScenarios5x...) {
		want, got := f.CodeName, RequestName(f.Code)
		if f.Kind == "response" {
			got = ResponseName(f.Code)
			require.Equal(t, strings.Replace(f.RequestName, "UNKNOWN_", "REQUEST_", 1), RequestName(f.RequestCode), f.File)
		} else {
			want = strings.Replace(want, "UNKNOWN_", "REQUEST_", 1) // 3442: 200050 cut to 16 bits (p3)
		}
		require.Equal(t, want, got, f.File)
	}
}

// TestPopCodesNeedJSON: the POP codes do not fit the ROCKETMQ header's 16 bits.
func TestPopCodesNeedJSON(t *testing.T) {
	for _, code := range []int32{RequestPopMessage, RequestAckMessage, RequestChangeMessageInvisibleTime, RequestBatchAckMessage} {
		require.Greater(t, code, int32(1<<15-1))
	}
	code := RequestPopMessage
	require.Equal(t, int16(3442), int16(code), "what Java writes in a ROCKETMQ header")
	var f remoting.Fields = (&PopMessageRequest{Topic: "t", ConsumerGroup: "g"}).Encode()
	require.Equal(t, "false", f.Value("order"))
}

// TestGolden5xRoutes reads the 5.3.3 name server's routes (standard JSON: the client
// reports 479).
func TestGolden5xRoutes(t *testing.T) {
	n := 0
	for _, f := range loadGoldenFrom(t, goldenScenarios5x...) {
		if f.Kind != "response" || f.RequestName != "GET_ROUTEINFO_BY_TOPIC" || f.Code != ResponseSuccess {
			continue
		}
		n++
		var r TopicRouteData
		require.NoError(t, r.Decode(f.body(t)), f.File)
		addr, ok := r.MasterAddr("broker-5a")
		require.True(t, ok, f.File)
		require.Equal(t, "127.0.0.1:10931", addr)
		require.NotEmpty(t, r.ReadableQueues("t"))
	}
	require.Positive(t, n)
}
