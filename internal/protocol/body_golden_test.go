package protocol

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

// bodyJSON decodes a frame's bodyJson into dst with encoding/json (it is standard JSON
// with every non-string key stringified).
func bodyJSON(t *testing.T, f *goldenFrame, dst any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(f.BodyJSON, dst), f.File)
}

// queueOfKey reads a stringified queue key of bodyJson.
func queueOfKey(t *testing.T, key string) message.Queue {
	t.Helper()
	var q struct {
		Topic      string `json:"topic"`
		BrokerName string `json:"brokerName"`
		QueueID    int32  `json:"queueId"`
	}
	require.NoError(t, json.Unmarshal([]byte(key), &q), key)
	return message.Queue{Topic: q.Topic, BrokerName: q.BrokerName, QueueID: q.QueueID}
}

func TestGoldenRoutes(t *testing.T) {
	frames := loadGolden(t)
	quirky := 0
	for _, f := range goldenBodies(t, frames, "GET_ROUTEINFO_BY_TOPIC") {
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			body := f.body(t)
			var want struct {
				QueueDatas []struct {
					BrokerName     string `json:"brokerName"`
					ReadQueueNums  int32  `json:"readQueueNums"`
					WriteQueueNums int32  `json:"writeQueueNums"`
					Perm           int32  `json:"perm"`
					TopicSysFlag   int32  `json:"topicSysFlag"`
				} `json:"queueDatas"`
				BrokerDatas []struct {
					Cluster     string            `json:"cluster"`
					BrokerName  string            `json:"brokerName"`
					BrokerAddrs map[string]string `json:"brokerAddrs"`
				} `json:"brokerDatas"`
			}
			bodyJSON(t, f, &want)
			if !*f.BodyStrict {
				quirky++
				var strict any
				require.Error(t, json.Unmarshal(body, &strict), "encoding/json rejects the name server's form")
			}

			var r TopicRouteData
			require.NoError(t, r.Decode(body))
			require.Len(t, r.QueueDatas, len(want.QueueDatas))
			for i, qd := range want.QueueDatas {
				require.Equal(t, QueueData(qd), r.QueueDatas[i])
			}
			require.Len(t, r.BrokerDatas, len(want.BrokerDatas))
			for i, bd := range want.BrokerDatas {
				got := r.BrokerDatas[i]
				require.Equal(t, bd.Cluster, got.Cluster)
				require.Equal(t, bd.BrokerName, got.BrokerName)
				require.Len(t, got.BrokerAddrs, len(bd.BrokerAddrs))
				for id, addr := range bd.BrokerAddrs {
					n, err := strconv.ParseInt(id, 10, 64)
					require.NoError(t, err)
					require.Equal(t, addr, got.BrokerAddrs[n])
				}
			}
			addr, ok := r.MasterAddr("broker-a")
			require.True(t, ok)
			require.Equal(t, "127.0.0.1:10911", addr)

			// Re-encoded in each style, the route reads back the same; the name server's
			// own form comes back byte for byte.
			for _, style := range []Style{StyleFastjson, StyleStandard, StyleBrowserCompatible} {
				var back TopicRouteData
				require.NoError(t, back.Decode(r.Encode(style)), style)
				require.Equal(t, r, back, style)
			}
			if *f.BodyStrict {
				require.Equal(t, string(body), string(r.Encode(StyleBrowserCompatible)))
			} else {
				require.Equal(t, string(body), string(r.Encode(StyleFastjson)))
			}
		})
	}
	require.Positive(t, quirky, "no golden route with unquoted keys")
}

func TestGoldenHeartbeats(t *testing.T) {
	frames := loadGolden(t)
	langs := map[string]int{}
	for _, f := range goldenBodies(t, frames, "HEART_BEAT") {
		if f.Kind == "response" {
			continue
		}
		langs[f.Language]++
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			body := f.body(t)
			var want struct {
				ClientID        string         `json:"clientID"`
				ProducerDataSet []ProducerData `json:"producerDataSet"`
				ConsumerDataSet []struct {
					GroupName           string `json:"groupName"`
					ConsumeType         string `json:"consumeType"`
					MessageModel        string `json:"messageModel"`
					ConsumeFromWhere    string `json:"consumeFromWhere"`
					UnitMode            bool   `json:"unitMode"`
					SubscriptionDataSet []struct {
						ClassFilterMode bool          `json:"classFilterMode"`
						Topic           string        `json:"topic"`
						SubString       string        `json:"subString"`
						TagsSet         []string      `json:"tagsSet"`
						CodeSet         []json.Number `json:"codeSet"` // Go writes ["2598944"], Java [2598944]
						SubVersion      int64         `json:"subVersion"`
						ExpressionType  string        `json:"expressionType"`
					} `json:"subscriptionDataSet"`
				} `json:"consumerDataSet"`
			}
			bodyJSON(t, f, &want)

			var h HeartbeatData
			require.NoError(t, h.Decode(body))
			require.Equal(t, want.ClientID, h.ClientID)
			require.Equal(t, len(want.ProducerDataSet), len(h.ProducerDataSet))
			for i, p := range want.ProducerDataSet {
				require.Equal(t, p, h.ProducerDataSet[i])
			}
			require.Len(t, h.ConsumerDataSet, len(want.ConsumerDataSet))
			for i, c := range want.ConsumerDataSet {
				got := h.ConsumerDataSet[i]
				require.Equal(t, c.GroupName, got.GroupName)
				require.Equal(t, ConsumeType(c.ConsumeType), got.ConsumeType)
				require.Equal(t, MessageModel(c.MessageModel), got.MessageModel)
				require.Equal(t, ConsumeFromWhere(c.ConsumeFromWhere), got.ConsumeFromWhere)
				require.Equal(t, c.UnitMode, got.UnitMode)
				require.Len(t, got.SubscriptionDataSet, len(c.SubscriptionDataSet))
				for j, s := range c.SubscriptionDataSet {
					codes := []int32{}
					for _, n := range s.CodeSet {
						code, err := strconv.ParseInt(string(n), 10, 32)
						require.NoError(t, err)
						codes = append(codes, int32(code))
					}
					require.Equal(t, SubscriptionData{ClassFilterMode: s.ClassFilterMode, Topic: s.Topic,
						SubString: s.SubString, TagsSet: s.TagsSet, CodeSet: codes, SubVersion: s.SubVersion,
						ExpressionType: s.ExpressionType}, got.SubscriptionDataSet[j])
					if s.SubString != SubAll {
						built, err := BuildSubscription(s.Topic, s.SubString)
						require.NoError(t, err)
						require.Equal(t, built.CodeSet, codes, "the client's codeSet is Java's String.hashCode")
					}
				}
			}
			// The Java client's own heartbeat is what Encode writes, byte for byte.
			if f.Language == "JAVA" {
				require.Equal(t, string(body), string(h.Encode(StyleFastjson)))
			}
			var back HeartbeatData
			require.NoError(t, back.Decode(h.Encode(StyleStandard)))
			require.Equal(t, h, back)
		})
	}
	require.Positive(t, langs["GO"])
	require.Positive(t, langs["JAVA"])
}

func TestGoldenGoHeartbeatNanosecondSubVersion(t *testing.T) {
	f := goldenFrameByFile(t, loadGolden(t), "b_consume_retry", "0007-")
	var h HeartbeatData
	require.NoError(t, h.Decode(f.body(t)))
	// 19 digits: exact only if never read through a float64.
	require.Equal(t, int64(1796009514646227664), h.ConsumerDataSet[0].SubscriptionDataSet[0].SubVersion)
	require.Equal(t, "192.0.2.2@golden-c1", h.ClientID)
}

func TestGoldenConsumerLists(t *testing.T) {
	frames := loadGolden(t)
	for _, f := range goldenBodies(t, frames, "GET_CONSUMER_LIST_BY_GROUP") {
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			var want struct {
				IDs []string `json:"consumerIdList"`
			}
			bodyJSON(t, f, &want)
			var got ConsumerIDList
			require.NoError(t, got.Decode(f.body(t)))
			require.Equal(t, want.IDs, got.ConsumerIDList)
			require.Equal(t, f.BodyText, string(got.Encode(StyleFastjson)))
		})
	}
}

func TestGoldenLockBatches(t *testing.T) {
	frames := loadGolden(t)
	type mq struct {
		Topic      string `json:"topic"`
		BrokerName string `json:"brokerName"`
		QueueID    int32  `json:"queueId"`
	}
	toQueues := func(in []mq) []message.Queue {
		out := make([]message.Queue, 0, len(in))
		for _, q := range in {
			out = append(out, message.Queue(q))
		}
		return out
	}
	kinds := map[string]int{}
	for _, f := range goldenBodies(t, frames, "LOCK_BATCH_MQ", "UNLOCK_BATCH_MQ") {
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			body := f.body(t)
			switch {
			case f.Kind == "response":
				kinds["lock response"]++
				var want struct {
					Set []mq `json:"lockOKMQSet"`
				}
				bodyJSON(t, f, &want)
				var got LockBatchResponse
				require.NoError(t, got.Decode(body))
				require.Equal(t, toQueues(want.Set), got.LockOKMQSet)
				require.Equal(t, string(body), string(got.Encode(StyleFastjson)), "the broker's own bytes")
			default:
				kinds[f.CodeName]++
				var want struct {
					Group    string `json:"consumerGroup"`
					ClientID string `json:"clientId"`
					Set      []mq   `json:"mqSet"`
				}
				bodyJSON(t, f, &want)
				var lock LockBatchRequest
				var unlock UnlockBatchRequest
				if f.Code == RequestLockBatchMQ {
					require.NoError(t, lock.Decode(body))
				} else {
					require.NoError(t, unlock.Decode(body))
					lock = LockBatchRequest(unlock)
				}
				require.Equal(t, LockBatchRequest{ConsumerGroup: want.Group, ClientID: want.ClientID,
					MQSet: toQueues(want.Set)}, lock)
			}
		})
	}
	require.Positive(t, kinds["lock response"])
	require.Positive(t, kinds["LOCK_BATCH_MQ"])
	require.Positive(t, kinds["UNLOCK_BATCH_MQ"])
}

func TestGoldenRunningInfo(t *testing.T) {
	frames := loadGolden(t)
	langs := map[string]int{}
	for _, f := range goldenBodies(t, frames, "GET_CONSUMER_RUNNING_INFO") {
		langs[f.Language]++
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			body := f.body(t)
			var want struct {
				Properties map[string]string `json:"properties"`
				MQTable    map[string]struct {
					CommitOffset       int64 `json:"commitOffset"`
					CachedMsgCount     int32 `json:"cachedMsgCount"`
					CachedMsgMaxOffset int64 `json:"cachedMsgMaxOffset"`
					Locked             bool  `json:"locked"`
					LastPullTimestamp  int64 `json:"lastPullTimestamp"`
				} `json:"mqTable"`
				StatusTable map[string]struct {
					PullRT            float64 `json:"pullRT"`
					PullTPS           float64 `json:"pullTPS"`
					ConsumeRT         float64 `json:"consumeRT"`
					ConsumeOKTPS      float64 `json:"consumeOKTPS"`
					ConsumeFailedTPS  float64 `json:"consumeFailedTPS"`
					ConsumeFailedMsgs int64   `json:"consumeFailedMsgs"`
				} `json:"statusTable"`
				SubscriptionSet []SubscriptionData `json:"subscriptionSet"`
			}
			bodyJSON(t, f, &want)

			var got ConsumerRunningInfo
			require.NoError(t, got.Decode(body))
			require.Equal(t, want.Properties, got.Properties)
			require.Len(t, got.MQTable, len(want.MQTable))
			for key, w := range want.MQTable {
				p, ok := got.MQTable[queueOfKey(t, key)]
				require.True(t, ok, key)
				require.Equal(t, w.CommitOffset, p.CommitOffset, key)
				require.Equal(t, w.CachedMsgCount, p.CachedMsgCount, key)
				require.Equal(t, w.CachedMsgMaxOffset, p.CachedMsgMaxOffset, key)
				require.Equal(t, w.Locked, p.Locked, key)
				require.Equal(t, w.LastPullTimestamp, p.LastPullTimestamp, key)
				require.False(t, p.Dropped)
			}
			require.Len(t, got.StatusTable, len(want.StatusTable))
			for topic, w := range want.StatusTable {
				require.Equal(t, ConsumeStatus(w), got.StatusTable[topic], topic)
			}
			require.Equal(t, want.SubscriptionSet, got.SubscriptionSet)

			// Written in fastjson style, the Java client's answer is the same document.
			if f.Language == "JAVA" {
				require.Equal(t, canonical(mustParse(t, string(body))),
					canonical(mustParse(t, string(got.Encode(StyleFastjson)))))
				require.Equal(t, 3.9375, got.StatusTable["GoldenTopic"].ConsumeRT)
				require.Equal(t, "V4_9_8", got.Properties[PropClientVersion])
			}
			for _, style := range []Style{StyleFastjson, StyleStandard} {
				var back ConsumerRunningInfo
				require.NoError(t, back.Decode(got.Encode(style)), style)
				require.Equal(t, got, back, style)
			}
		})
	}
	require.Positive(t, langs["GO"])
	require.Positive(t, langs["JAVA"])
}

func TestGoldenDroppedSpellings(t *testing.T) {
	frames := loadGolden(t)
	for _, file := range []string{"0057-", "0246-"} { // Go writes "dropped", Java "droped"
		f := goldenFrameByFile(t, frames, "d_admin_running_consumer", file)
		body := []byte(f.BodyText)
		var ri ConsumerRunningInfo
		require.NoError(t, ri.Decode(body))
		for q, p := range ri.MQTable {
			require.False(t, p.Dropped, q.String())
		}
	}
	var ri ConsumerRunningInfo
	require.NoError(t, ri.Decode([]byte(`{"mqTable":{{"topic":"t","brokerName":"b","queueId":1}:{"droped":true}}}`)))
	require.True(t, ri.MQTable[message.Queue{Topic: "t", BrokerName: "b", QueueID: 1}].Dropped)
	require.NoError(t, ri.Decode([]byte(`{"mqTable":{"{\"topic\":\"t\",\"brokerName\":\"b\",\"queueId\":1}":{"dropped":true}}}`)))
	require.True(t, ri.MQTable[message.Queue{Topic: "t", BrokerName: "b", QueueID: 1}].Dropped)
}

func TestGoldenResetOffsets(t *testing.T) {
	frames := loadGolden(t)
	forms := map[string]int{}
	for _, f := range goldenBodies(t, frames, "RESET_CONSUMER_CLIENT_OFFSET", "INVOKE_BROKER_TO_RESET_OFFSET") {
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			body := f.body(t)
			want := map[message.Queue]int64{}
			var raw struct {
				OffsetTable json.RawMessage `json:"offsetTable"`
			}
			bodyJSON(t, f, &raw)
			if raw.OffsetTable[0] == '[' {
				forms["list"]++
				var list []struct {
					Topic      string `json:"topic"`
					BrokerName string `json:"brokerName"`
					QueueID    int32  `json:"queueId"`
					Offset     int64  `json:"offset"`
				}
				require.NoError(t, json.Unmarshal(raw.OffsetTable, &list))
				for _, e := range list {
					want[message.Queue{Topic: e.Topic, BrokerName: e.BrokerName, QueueID: e.QueueID}] = e.Offset
				}
			} else {
				forms["map"]++
				var m map[string]int64
				require.NoError(t, json.Unmarshal(raw.OffsetTable, &m))
				for k, v := range m {
					want[queueOfKey(t, k)] = v
				}
				var strict any
				require.Error(t, json.Unmarshal(body, &strict), "encoding/json rejects object keys")
			}
			var got ResetOffsetBody
			require.NoError(t, got.Decode(body))
			require.Equal(t, want, got.OffsetTable)
			require.Len(t, want, 4)

			for _, enc := range [][]byte{got.Encode(StyleFastjson), got.Encode(StyleStandard), got.EncodeList(StyleStandard)} {
				var back ResetOffsetBody
				require.NoError(t, back.Decode(enc), string(enc))
				require.Equal(t, got, back)
			}
		})
	}
	require.Positive(t, forms["list"])
	require.Positive(t, forms["map"])
}

func TestGoldenConsumeDirectlyResults(t *testing.T) {
	frames := loadGolden(t)
	for _, f := range goldenBodies(t, frames, "CONSUME_MESSAGE_DIRECTLY") {
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			var got ConsumeMessageDirectlyResult
			require.NoError(t, got.Decode(f.body(t)))
			require.Equal(t, ConsumeMessageDirectlyResult{AutoCommit: true, ConsumeResult: CRSuccess}, got)
		})
	}
}
