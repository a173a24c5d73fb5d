package integration

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

const traceTopic = "RMQ_SYS_TRACE_TOPIC"

// traceRecords decodes trace message bodies with a decoder written from the format's
// description (golden README, "Notes on h–k"), independent of the encoder: records end
// with 0x02, fields are separated by 0x01.
func traceRecords(t *testing.T, msgs []*message.Ext) [][]string {
	t.Helper()
	var out [][]string
	for _, m := range msgs {
		body := string(m.Body)
		require.True(t, strings.HasSuffix(body, "\x02"), "every record ends with 0x02")
		for _, rec := range strings.Split(strings.TrimSuffix(body, "\x02"), "\x02") {
			out = append(out, strings.Split(rec, "\x01"))
		}
	}
	return out
}

func TestMessageTraceRecordsEveryDelivery(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 2), fakebroker.WithTopic(traceTopic, 1), fastDelays())
	const n = 6
	sent := map[string]int{} // msgId -> i
	for i := range n {
		m := &message.Message{Topic: "t", Body: []byte("m-" + strconv.Itoa(i))}
		if i != 5 {
			m.Properties.Set(message.PropertyKeys, "key-"+strconv.Itoa(i))
		}
		m.Properties.Set(message.PropertyUniqKey, "UNIQ"+strconv.Itoa(i))
		_, err := c.Produce("t", m)
		require.NoError(t, err)
		sent["UNIQ"+strconv.Itoa(i)] = i
	}
	var mu sync.Mutex
	failedOnce := false
	begin := time.Now()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithMessageTrace(consumer.MessageTrace{})),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			mu.Lock()
			defer mu.Unlock()
			if string(msgs[0].Body) == "m-2" && !failedOnce {
				failedOnce = true
				return consumer.ReconsumeLater
			}
			return consumer.ConsumeSuccess
		})
	// 7 deliveries (m-2 twice), 2 records each.
	waitFor(t, 20*time.Second, "the trace records", func() bool { return pc.Stats().MessageTrace.Sent == 14 })
	shutdown(t, pc)
	end := time.Now()
	st := pc.Stats().MessageTrace
	require.Zero(t, st.Dropped+st.Failed)

	stored := c.Messages(traceTopic)
	require.NotEmpty(t, stored)
	keysProp := map[string]bool{}
	for _, m := range stored {
		for _, k := range strings.Split(m.Properties.Value(message.PropertyKeys), " ") {
			keysProp[k] = true
		}
		require.Len(t, m.Properties.Value(message.PropertyUniqKey), 32)
		require.Empty(t, m.Tags(), "trace sends carry no tags")
	}
	before := map[string][]string{} // requestId -> SubBefore fields
	var afters [][]string
	for _, f := range traceRecords(t, stored) {
		switch f[0] {
		case "SubBefore":
			require.Len(t, f, 8, "Java's 8 fields")
			ts, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err)
			require.True(t, ts >= begin.UnixMilli() && ts <= end.UnixMilli(), "timestamp %d", ts)
			require.Equal(t, "null", f[2], "no MSG_REGION: Java's null")
			require.Equal(t, "g", f[3])
			require.Len(t, f[4], 32, "request id, as Java's createUniqID")
			i, ok := sent[f[5]]
			require.True(t, ok, "msgId %s is a produced message's UNIQ_KEY", f[5])
			require.True(t, keysProp[f[5]], "KEYS indexes the msgId")
			if i == 5 {
				require.Equal(t, "null", f[7], "no keys: Java's null")
			} else {
				require.Equal(t, "key-"+strconv.Itoa(i), f[7])
				require.True(t, keysProp[f[7]], "KEYS indexes the keys")
			}
			if _, dup := before[f[4]]; dup {
				t.Fatalf("request id %s used twice with batch size 1", f[4])
			}
			before[f[4]] = f
		case "SubAfter":
			require.Len(t, f, 9)
			afters = append(afters, f)
		default:
			t.Fatalf("record type %q", f[0])
		}
	}
	require.Len(t, before, 7)
	require.Len(t, afters, 7)
	retries := 0
	for _, f := range afters {
		b, ok := before[f[1]]
		require.True(t, ok, "SubAfter's request id is its SubBefore's")
		require.Equal(t, b[5], f[2], "same msgId")
		cost, err := strconv.ParseInt(f[3], 10, 64)
		require.NoError(t, err)
		require.GreaterOrEqual(t, cost, int64(0))
		require.Equal(t, b[7], f[5], "same keys")
		afterTS, _ := strconv.ParseInt(f[7], 10, 64)
		beforeTS, _ := strconv.ParseInt(b[1], 10, 64)
		require.GreaterOrEqual(t, afterTS, beforeTS)
		require.Equal(t, "g", f[8])
		if b[6] == "1" {
			retries++
		}
		if sent[f[2]] == 2 && b[6] == "0" {
			require.Equal(t, "false", f[4], "the first delivery of m-2 failed")
			require.Equal(t, "4", f[6], "ConsumeReturnType FAILED")
			continue
		}
		require.Equal(t, "true", f[4])
		require.Equal(t, "0", f[6], "ConsumeReturnType SUCCESS")
	}
	require.Equal(t, 1, retries, "the retry of m-2 carries reconsume times 1")
}

func TestMessageTraceRefusedSlowsNothing(t *testing.T) {
	// The trace topic exists, but the broker answers every send of it slowly with an
	// error: consumption must go on at full speed, and the trace records be dropped.
	c := newCluster(t, fakebroker.WithTopic("t", 4), fakebroker.WithTopic(traceTopic, 1))
	b := c.Brokers()[0]
	_, err := b.Inject(fakebroker.Fault{Code: protocol.RequestSendMessageV2, Fail: protocol.ResponseNoPermission, Delay: 2 * time.Second})
	require.NoError(t, err)
	const n = 4000
	want := produce(t, c, "t", "m", n, "")
	got := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithMessageTrace(consumer.MessageTrace{MaxPending: 100})),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	// Each refused send takes 2 s: waiting for the trace would take n*2/100*2 s = 160 s.
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == n })
	missing, _ := got.check(want)
	require.Zero(t, missing)
	st := pc.Stats().MessageTrace
	require.Zero(t, st.Sent)
	require.Positive(t, st.Dropped, "records beyond MaxPending are dropped")
	shutdown(t, pc) // within its context, though a refused send is in flight
}
