package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
	"github.com/rmqpush/rmqpush/test/reliability/record"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"minimal", []string{"-namesrv", "127.0.0.1:9876", "-records", "r"}, ""},
		{"everything", []string{"-namesrv", "127.0.0.1:9876", "-records", "r", "-delay", "0s", "-poison", "m-1",
			"-max-reconsume", "3", "-persist-interval", "1s", "-pull-batch", "8", "-stats", "s", "-stats-every", "100ms"}, ""},
		{"no name server", []string{"-records", "r"}, "-namesrv"},
		{"no record file", []string{"-namesrv", "127.0.0.1:9876"}, "-records"},
		{"negative delay", []string{"-namesrv", "127.0.0.1:9876", "-records", "r", "-delay", "-1s"}, "negative"},
		{"zero stats interval", []string{"-namesrv", "127.0.0.1:9876", "-records", "r", "-stats-every", "0s"}, "-stats-every"},
		{"stray argument", []string{"-namesrv", "127.0.0.1:9876", "-records", "r", "x"}, "unexpected"},
		{"unknown flag", []string{"-fish"}, "fish"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse(tt.args, io.Discard)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			_, err = consumer.NewPushConsumer("g", s.options(newLineLogger(io.Discard, consumer.LogInfo))...)
			require.NoError(t, err, "the flags make valid consumer options")
		})
	}
	var stderr bytes.Buffer
	require.Equal(t, 2, run(context.Background(), []string{"-records", "r"}, io.Discard, &stderr))
	require.Contains(t, stderr.String(), "-namesrv is required")
}

func TestRecorderListener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records")
	r, err := openRecorder(path, 42, "m-poison")
	require.NoError(t, err)
	defer r.close()
	listen := r.listener(time.Millisecond)
	msg := func(body string, off int64, reconsume int32) *message.Ext {
		m := &message.Ext{BrokerName: "broker-a", QueueID: 3, QueueOffset: off, ReconsumeTimes: reconsume}
		m.Body = []byte(body)
		return m
	}
	cc := &consumer.ConcurrentlyContext{Queue: message.Queue{Topic: "t", BrokerName: "broker-a", QueueID: 3}}
	ctx := context.Background()
	require.Equal(t, consumer.ConsumeSuccess, listen(ctx, []*message.Ext{msg("m-1", 7, 0), msg("m-2", 8, 0)}, cc))
	require.Equal(t, consumer.ReconsumeLater, listen(ctx, []*message.Ext{msg("m-poison", 9, 2)}, cc))
	require.Equal(t, consumer.ReconsumeLater, listen(ctx, []*message.Ext{msg("has space", 10, 0)}, cc), "not recordable, so not consumed")
	require.ErrorContains(t, r.err(), "white space")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.Equal(t, consumer.ReconsumeLater, r.listener(time.Hour)(cancelled, []*message.Ext{msg("m-3", 11, 0)}, cc),
		"a listener whose context ends consumes nothing")
	require.Equal(t, int64(3), r.handled.Load())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	recs, used, err := record.ParseAll(data)
	require.NoError(t, err)
	require.Equal(t, len(data), used)
	require.Len(t, recs, 3)
	require.Equal(t, record.Record{ID: "m-1", Broker: "broker-a", QueueID: 3, QueueOffset: 7, PID: 42, At: recs[0].At, Status: record.StatusOK}, recs[0])
	require.Equal(t, "m-2", recs[1].ID)
	require.Equal(t, record.Record{ID: "m-poison", Broker: "broker-a", QueueID: 3, QueueOffset: 9, ReconsumeTimes: 2, PID: 42, At: recs[2].At, Status: record.StatusLater}, recs[2])
}

func TestLineLogger(t *testing.T) {
	var b bytes.Buffer
	l := newLineLogger(&b, consumer.LogInfo)
	require.Equal(t, consumer.LogInfo, l.Level())
	l.Log(consumer.LogInfo, "queue added", "queue", "t@broker-a:0", "offset", int64(5), "dangling")
	line := b.String()
	require.True(t, strings.HasSuffix(line, ` info "queue added" queue="t@broker-a:0" offset="5" dangling="(missing)"`+"\n"), line)
	_, err := time.Parse(time.RFC3339Nano, strings.Fields(line)[0])
	require.NoError(t, err)
}

func TestSampler(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stats")
	s, err := startSampler(path, 5*time.Millisecond, func() int64 { return 7 })
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(path)
		return bytes.Count(data, []byte("\n")) >= 2
	}, 5*time.Second, 5*time.Millisecond)
	s.stop()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	first := strings.Fields(strings.SplitN(string(data), "\n", 2)[0])
	require.Len(t, first, 4)
	require.True(t, strings.HasPrefix(first[1], "goroutines="))
	require.Equal(t, "handled=7", first[3])
}

// The whole process, in-process: it consumes, records, and shuts down on its context.
func TestConsume(t *testing.T) {
	c, err := fakebroker.NewCluster(fakebroker.WithTopic("t", 2))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	var msgs []*message.Message
	for _, body := range []string{"m-0", "m-1", "m-2", "m-3"} {
		msgs = append(msgs, &message.Message{Topic: "t", Body: []byte(body)})
	}
	_, err = c.Produce("t", msgs...)
	require.NoError(t, err)
	dir := t.TempDir()
	records := filepath.Join(dir, "records")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stdout, stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"-namesrv", c.NameServerAddr(), "-group", "g", "-topic", "t", "-records", records,
			"-log", filepath.Join(dir, "log"), "-stats", filepath.Join(dir, "stats"), "-delay", "1ms"}, &stdout, &stderr)
	}()
	tail := record.NewTail(records)
	seen := map[string]bool{}
	require.Eventually(t, func() bool {
		recs, err := tail.Next()
		require.NoError(t, err)
		for _, r := range recs {
			seen[r.ID] = true
		}
		return len(seen) == 4
	}, 20*time.Second, 10*time.Millisecond)
	cancel()
	require.Equal(t, 0, <-done, "stderr: %s", stderr.String())
	require.Contains(t, stdout.String(), "started pid ")
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	require.Contains(t, string(log), `"relconsumer shut down"`)
	require.Contains(t, string(log), `"queue added" queue="t@broker-a:0"`)
}
