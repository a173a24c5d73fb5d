package control

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// call sends a control request and decodes the JSON answer into out (when not nil); it
// returns the status.
func call(t *testing.T, srv *httptest.Server, method, path, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil {
		require.NoError(t, json.Unmarshal(data, out), "answer %s", data)
	}
	return resp.StatusCode
}

func TestHandler(t *testing.T) {
	c, err := fakebroker.NewCluster(fakebroker.WithBrokers(2), fakebroker.WithTopic("t", 2))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	srv := httptest.NewServer(NewHandler(c))
	defer srv.Close()
	a := c.Broker("broker-a")

	var brokers []BrokerInfo
	require.Equal(t, http.StatusOK, call(t, srv, "GET", "/brokers", "", &brokers))
	require.Len(t, brokers, 2)
	require.Equal(t, BrokerInfo{Name: "broker-a", Addr: a.Addr(), Running: true}, brokers[0])

	var produced map[string]int
	require.Equal(t, http.StatusOK, call(t, srv, "POST", "/produce", `{"topic":"t","bodies":["m0","m1","m2","m3","m4"],"tags":"x"}`, &produced))
	require.Equal(t, 5, produced["count"])
	require.Len(t, c.Messages("t"), 5)
	require.Equal(t, "x", c.Messages("t")[0].Tags())

	a.SetCommittedOffset("g", "t", 1, 1)
	var offs []QueueOffsets
	require.Equal(t, http.StatusOK, call(t, srv, "GET", "/offsets?group=g&topic=t", "", &offs))
	require.Equal(t, []QueueOffsets{
		{Broker: "broker-a", QueueID: 0, Max: 2, Committed: -1},
		{Broker: "broker-a", QueueID: 1, Max: 1, Committed: 1},
		{Broker: "broker-b", QueueID: 0, Max: 1, Committed: -1},
		{Broker: "broker-b", QueueID: 1, Max: 1, Committed: -1},
	}, offs)

	var msgs []StoredMessage
	require.Equal(t, http.StatusOK, call(t, srv, "GET", "/messages?topic=t&limit=2", "", &msgs))
	require.Len(t, msgs, 2)
	require.Equal(t, "m0", msgs[0].Body)
	require.Equal(t, "broker-a", msgs[0].Broker)
	require.NotEmpty(t, msgs[0].Properties["UNIQ_KEY"])

	var clients map[string][]string
	require.Equal(t, http.StatusOK, call(t, srv, "GET", "/clients?group=g", "", &clients))
	require.Equal(t, map[string][]string{"broker-a": {}, "broker-b": {}}, clients)

	// Life cycle.
	for _, tc := range []struct {
		action  string
		running bool
	}{{"stop", false}, {"start", true}, {"kill", false}, {"start", true}, {"pause", true}, {"resume", true}, {"close-connections", true}} {
		require.Equal(t, http.StatusOK, call(t, srv, "POST", "/brokers/broker-a/"+tc.action, "", nil), tc.action)
		require.Equal(t, tc.running, a.Running(), "after %s", tc.action)
	}

	// Faults.
	require.Equal(t, http.StatusOK, call(t, srv, "POST", "/brokers/broker-b/faults",
		fmt.Sprintf(`{"code":%d,"fail":%d,"for":"1m"}`, protocol.RequestPullMessage, protocol.ResponseSystemBusy), nil))
	require.Equal(t, http.StatusOK, call(t, srv, "POST", "/brokers/broker-b/faults",
		fmt.Sprintf(`{"code":%d,"delay":"10ms","times":3}`, protocol.RequestPullMessage), nil))
	require.Equal(t, http.StatusOK, call(t, srv, "POST", "/brokers/broker-b/clear-faults", "", nil))

	// Errors.
	errs := []struct {
		method, path, body string
		status             int
		contains           string
	}{
		{"POST", "/brokers/broker-z/stop", "", http.StatusNotFound, "no broker named"},
		{"POST", "/brokers/broker-a/explode", "", http.StatusNotFound, "unknown action"},
		{"POST", "/brokers/broker-a/faults", `{"code":11}`, http.StatusBadRequest, "no action"},
		{"POST", "/brokers/broker-a/faults", `{"code":11,"delay":"soon"}`, http.StatusBadRequest, "delay"},
		{"POST", "/brokers/broker-a/faults", `{"code":11,"bogus":1}`, http.StatusBadRequest, "bad JSON"},
		{"POST", "/produce", `{"topic":"","bodies":["x"]}`, http.StatusInternalServerError, "produced 0 of 1"},
		{"POST", "/produce", `[`, http.StatusBadRequest, "bad JSON"},
		{"GET", "/offsets?group=g", "", http.StatusBadRequest, "required"},
		{"GET", "/messages", "", http.StatusBadRequest, "required"},
		{"GET", "/messages?topic=t&limit=0", "", http.StatusBadRequest, "limit"},
		{"GET", "/clients", "", http.StatusBadRequest, "required"},
	}
	for _, e := range errs {
		t.Run(e.method+" "+e.path, func(t *testing.T) {
			var out map[string]string
			require.Equal(t, e.status, call(t, srv, e.method, e.path, e.body, &out))
			require.Contains(t, out["error"], e.contains)
		})
	}
}

func TestHandlerLagRequestsRegressions(t *testing.T) {
	c, err := fakebroker.NewCluster(fakebroker.WithTopic("t", 1))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	srv := httptest.NewServer(NewHandler(c))
	defer srv.Close()
	a := c.Broker("broker-a")

	require.Equal(t, http.StatusOK, call(t, srv, "POST", "/brokers/broker-a/lag", `[{"code":11,"min":"300us"},{"code":15,"min":"0s","max":"2ms"}]`, nil))
	require.Equal(t, http.StatusBadRequest, call(t, srv, "POST", "/brokers/broker-a/lag", `[{"code":11,"min":"2ms","max":"1ms"}]`, nil))
	require.Equal(t, http.StatusBadRequest, call(t, srv, "POST", "/brokers/broker-a/lag", `[{"code":11,"min":"soon"}]`, nil))
	require.Equal(t, http.StatusOK, call(t, srv, "POST", "/brokers/broker-a/lag", `[]`, nil))

	a.SetCommittedOffset("g", "t", 0, 5)
	var counts map[string]map[int32]int
	require.Equal(t, http.StatusOK, call(t, srv, "GET", "/requests", "", &counts))
	require.Contains(t, counts, NameServerKey)
	require.Contains(t, counts, "broker-a")

	var regs map[string]Regressions
	require.Equal(t, http.StatusOK, call(t, srv, "GET", "/regressions?group=g", "", &regs))
	require.Equal(t, map[string]Regressions{"broker-a": {Count: 0, Recent: nil}}, regs)
}
