package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestBroadcastingEachConsumerGetsEveryMessage runs two broadcasting peer consumers of
// one group on a topic with 4 queues on each of 2 brokers: each gets every message once.
// Broadcasting consumers keep their offsets in a local file, so the fake must end with
// no committed offset for the group; the offsets the peer wrote to its file, computed
// from the fake's nextBeginOffset answers, reach every queue's max offset.
func TestBroadcastingEachConsumerGetsEveryMessage(t *testing.T) {
	t.Parallel()
	const topic = "conformance-broadcasting"
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic(topic, 4))
	group := uniqueName("conf-broadcasting")
	offsetDir := peerOffsetDir(t, group)

	cols := []*collector{{}, {}}
	var consumers []*peerConsumer
	for i, col := range cols {
		instance := fmt.Sprintf("%s-%d", group, i+1)
		consumers = append(consumers, startConsumer(t, c, group, instance, topic,
			col.listener(instance, nil), consumer.WithConsumerModel(consumer.BroadCasting)))
	}
	for _, b := range c.Brokers() {
		for _, pc := range consumers {
			pc.clientID(t, b)
		}
		hb, ok := b.LastHeartbeat(group)
		require.True(t, ok)
		require.Equal(t, "BROADCASTING", hb.MessageModel)
		require.Len(t, hb.Subscriptions, 1, "a broadcasting consumer subscribes to no retry topic")
		require.Equal(t, topic, hb.Subscriptions[0].Topic)
	}

	want := produceBodies(t, c, topic, "broadcast", 100)
	for i, col := range cols {
		col.waitAll(t, want)
		for body, ds := range col.byBody() {
			require.Len(t, ds, 1, "consumer %d got %q %d times", i+1, body, len(ds))
		}
	}

	// The peer writes its local offsets 10 s after start and every 5 s after.
	clientID := consumers[0].clientID(t, c.Brokers()[0])
	file := filepath.Join(offsetDir, clientID, "offset.json")
	var lag []string
	ok := assertEventually(func() bool {
		lag = lag[:0]
		stored, err := readPeerOffsets(file)
		if err != nil {
			lag = append(lag, err.Error())
			return false
		}
		for _, q := range allQueues(c, topic) {
			maxOff := c.Broker(q.BrokerName).MaxOffset(topic, int(q.QueueID))
			if stored[q] != maxOff {
				lag = append(lag, fmt.Sprintf("%s: %d of %d", q, stored[q], maxOff))
			}
		}
		return len(lag) == 0
	})
	require.True(t, ok, "the peer's local offsets never reached the max offsets: %v", lag)

	for _, pc := range consumers {
		pc.stop(t)
	}
	for _, b := range c.Brokers() {
		require.Empty(t, b.CommittedOffsets(group), "offsets committed on %s", b.Name())
		require.Zero(t, b.Requests(codeUpdateConsumerOffset), "UPDATE_CONSUMER_OFFSET on %s", b.Name())
	}
}

// peerOffsetDir returns the directory where the peer keeps the local offsets of group's
// broadcasting consumers: <base>/<group>/<client id>/offset.json, with base from the
// environment variable rocketmq.client.localOffsetStoreDir, read when the peer's package
// is initialised, or $HOME/.rocketmq_client_go. The peer offers no other way to choose
// it, so the test removes what it wrote there when it ends (and base, if it made it).
func peerOffsetDir(t *testing.T, group string) string {
	t.Helper()
	base := os.Getenv("rocketmq.client.localOffsetStoreDir")
	if base == "" {
		home, err := os.UserHomeDir()
		require.NoError(t, err)
		base = filepath.Join(home, ".rocketmq_client_go")
	}
	_, err := os.Stat(base)
	baseExisted := err == nil
	dir := filepath.Join(base, group)
	t.Cleanup(func() {
		require.NoError(t, os.RemoveAll(dir))
		if !baseExisted {
			_ = os.Remove(base) // fails, harmlessly, when another test still has files there
		}
	})
	return dir
}

// readPeerOffsets reads the peer's local offset file: {"offsetTable": {<queue as JSON
// text>: offset}}.
func readPeerOffsets(file string) (map[message.Queue]int64, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s not written yet", file)
	}
	if err != nil {
		return nil, err
	}
	var wrapper struct {
		OffsetTable map[string]int64 `json:"offsetTable"`
	}
	if err := json.Unmarshal(data, &wrapper); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	out := make(map[message.Queue]int64)
	for k, off := range wrapper.OffsetTable {
		var q struct {
			Topic      string `json:"topic"`
			BrokerName string `json:"brokerName"`
			QueueID    int32  `json:"queueId"`
		}
		if err := json.Unmarshal([]byte(k), &q); err != nil {
			return nil, fmt.Errorf("%s: key %q: %w", file, k, err)
		}
		out[message.Queue{Topic: q.Topic, BrokerName: q.BrokerName, QueueID: q.QueueID}] = off
	}
	return out, nil
}
