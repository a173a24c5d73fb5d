package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

var (
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
	labelPair  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

func parse(t *testing.T, text string) []sample {
	t.Helper()
	var out []sample
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		require.NotNil(t, m, "a sample line: %q", line)
		v, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err, line)
		s := sample{name: m[1], labels: map[string]string{}, value: v}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			s.labels[p[1]] = p[2]
		}
		out = append(out, s)
	}
	return out
}

// sum adds the values of name's samples whose labels include want.
func sum(samples []sample, name string, want map[string]string) (total float64, n int) {
	for _, s := range samples {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range want {
			ok = ok && s.labels[k] == v
		}
		if ok {
			total += s.value
			n++
		}
	}
	return total, n
}

func TestScrapeMatchesWhatWasConsumed(t *testing.T) {
	const n = 300
	a, err := start(config{listen: "127.0.0.1:0", topic: "MetricsTopic", group: "metrics-group", n: n})
	require.NoError(t, err)
	defer func() { require.NoError(t, a.close()) }()
	require.True(t, strings.HasPrefix(a.addr, "127.0.0.1:"), "served on loopback")
	require.NoError(t, a.waitConsumed(time.Minute))

	base := map[string]string{"topic": "MetricsTopic", "consumer_group": "metrics-group", "client_id": a.c.ClientID()}
	var samples []sample
	// Offsets and caches settle just after the last listener call.
	deadline := time.Now().Add(10 * time.Second)
	for {
		text, err := a.scrape()
		require.NoError(t, err)
		samples = parse(t, text)
		lag, _ := sum(samples, "rocketmq_consumer_lag_messages", base)
		cached, _ := sum(samples, "rocketmq_consumer_cached_messages", base)
		if lag == 0 && cached == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	success := map[string]string{"invocation_status": "success"}
	for k, v := range base {
		success[k] = v
	}
	count, series := sum(samples, "rocketmq_process_time_count", success)
	require.Equal(t, 1, series)
	require.Equal(t, float64(n), count, "every message's process time, all successes")
	_, failures := sum(samples, "rocketmq_process_time_count", map[string]string{"invocation_status": "failure"})
	require.Zero(t, failures)
	buckets, _ := sum(samples, "rocketmq_process_time_bucket", map[string]string{"le": "60000"})
	require.Equal(t, float64(n), buckets, "RocketMQ's last bucket, 60000 ms, holds them all")
	_, bounds := sum(samples, "rocketmq_process_time_bucket", success)
	require.Equal(t, 8, bounds, "7 bounds and +Inf: 1, 5, 10, 100, 1000, 10000, 60000")

	await, _ := sum(samples, "rocketmq_await_time_count", base)
	require.Equal(t, float64(n), await)
	_, bounds = sum(samples, "rocketmq_await_time_bucket", base)
	require.Equal(t, 8, bounds, "1, 5, 20, 100, 1000, 5000, 10000 and +Inf")

	pulled, _ := sum(samples, "rocketmq_pulled_messages_total", base)
	require.Equal(t, float64(n), pulled)
	pulls, pullSeries := sum(samples, "rocketmq_pull_total", map[string]string{"consumer_group": "metrics-group", "invocation_status": "success"})
	require.Positive(t, pulls)
	require.Equal(t, 2, pullSeries, "one series per broker of the embedded cluster")

	_, queues := sum(samples, "rocketmq_consumer_lag_messages", base)
	require.Equal(t, 8, queues, "one lag series per queue: 4 on each of 2 brokers")
	lag, _ := sum(samples, "rocketmq_consumer_lag_messages", base)
	require.Zero(t, lag, "everything committed")
	cached, series := sum(samples, "rocketmq_consumer_cached_messages", base)
	require.Equal(t, 1, series)
	require.Zero(t, cached)
	_, series = sum(samples, "rocketmq_consumer_cached_bytes", base)
	require.Equal(t, 1, series)
	_, series = sum(samples, "rocketmq_consumer_lag_latency", base)
	require.Equal(t, 8, series)
}
