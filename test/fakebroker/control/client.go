package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// maxAnswer bounds the size of an answer Client reads.
const maxAnswer = 256 << 20

// produceChunk is how many messages Client.Produce sends per request.
const produceChunk = 20000

// Client drives a control endpoint.
type Client struct {
	base string // http://host:port
	http *http.Client
}

// NewClient returns a client of the endpoint at base ("http://127.0.0.1:port").
func NewClient(base string) *Client {
	return &Client{base: base, http: &http.Client{Transport: &http.Transport{}, Timeout: 60 * time.Second}}
}

// Close closes the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Brokers lists the cluster's brokers.
func (c *Client) Brokers(ctx context.Context) ([]BrokerInfo, error) {
	var out []BrokerInfo
	err := c.do(ctx, http.MethodGet, "/brokers", nil, &out)
	return out, err
}

// Broker runs a life-cycle action on the broker named name: stop, start, kill, pause,
// resume, close-connections, clear-faults.
func (c *Client) Broker(ctx context.Context, name, action string) error {
	return c.do(ctx, http.MethodPost, "/brokers/"+url.PathEscape(name)+"/"+url.PathEscape(action), nil, nil)
}

// NameServer runs a life-cycle action on the name server: stop, start, kill, pause,
// resume, close-connections, clear-faults.
func (c *Client) NameServer(ctx context.Context, action string) error {
	return c.do(ctx, http.MethodPost, "/namesrv/"+url.PathEscape(action), nil, nil)
}

// Inject puts a fault in force on the broker named name.
func (c *Client) Inject(ctx context.Context, name string, f FaultSpec) error {
	return c.do(ctx, http.MethodPost, "/brokers/"+url.PathEscape(name)+"/faults", f, nil)
}

// SetLag replaces the processing lags of the broker named name (none: no lag).
func (c *Client) SetLag(ctx context.Context, name string, lags ...LagSpec) error {
	if lags == nil {
		lags = []LagSpec{}
	}
	return c.do(ctx, http.MethodPost, "/brokers/"+url.PathEscape(name)+"/lag", lags, nil)
}

// Requests returns the requests the name server (NameServerKey) and each broker (by
// name) received so far, by request code.
func (c *Client) Requests(ctx context.Context) (map[string]map[int32]int, error) {
	var out map[string]map[int32]int
	err := c.do(ctx, http.MethodGet, "/requests", nil, &out)
	return out, err
}

// Regressions returns, by broker name, the consumer-offset writes of group (every
// group when "") that moved a stored offset back.
func (c *Client) Regressions(ctx context.Context, group string) (map[string]Regressions, error) {
	var out map[string]Regressions
	err := c.do(ctx, http.MethodGet, "/regressions?"+url.Values{"group": {group}}.Encode(), nil, &out)
	return out, err
}

// Produce stores one message per body in topic, round robin over its queues, in
// requests of at most 20,000 messages.
func (c *Client) Produce(ctx context.Context, topic string, bodies []string) error {
	for i := 0; i < len(bodies); i += produceChunk {
		part := bodies[i:min(i+produceChunk, len(bodies))]
		var out produceResult
		if err := c.do(ctx, http.MethodPost, "/produce", ProduceRequest{Topic: topic, Bodies: part}, &out); err != nil {
			return err
		}
		if out.Count != len(part) {
			return fmt.Errorf("control: produce: %d of %d stored", out.Count, len(part))
		}
	}
	return nil
}

// Offsets returns group's offsets on every queue of topic.
func (c *Client) Offsets(ctx context.Context, group, topic string) ([]QueueOffsets, error) {
	var out []QueueOffsets
	q := url.Values{"group": {group}, "topic": {topic}}
	err := c.do(ctx, http.MethodGet, "/offsets?"+q.Encode(), nil, &out)
	return out, err
}

// Messages returns up to limit messages of topic.
func (c *Client) Messages(ctx context.Context, topic string, limit int) ([]StoredMessage, error) {
	var out []StoredMessage
	q := url.Values{"topic": {topic}, "limit": {strconv.Itoa(limit)}}
	err := c.do(ctx, http.MethodGet, "/messages?"+q.Encode(), nil, &out)
	return out, err
}

// Clients returns the client ids of group each broker knows, by broker name.
func (c *Client) Clients(ctx context.Context, group string) (map[string][]string, error) {
	var out map[string][]string
	err := c.do(ctx, http.MethodGet, "/clients?"+url.Values{"group": {group}}.Encode(), nil, &out)
	return out, err
}

// do sends a request with in (when not nil) as its JSON body; out, when not nil,
// receives the JSON answer. An answer other than 200 is an error with its text.
// SetConsumeMode sets how group consumes topic when brokers assign queues, as mqadmin
// setConsumeMode does (POST /consume-mode).
func (c *Client) SetConsumeMode(ctx context.Context, group, topic, mode string, popShareQueueNum int) error {
	return c.do(ctx, http.MethodPost, "/consume-mode", ConsumeModeRequest{Group: group, Topic: topic, Mode: mode,
		PopShareQueueNum: popShareQueueNum}, nil)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("control: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("control: %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return fmt.Errorf("control: %s %s: %s: %s", method, path, resp.Status, e.Error)
		}
		return fmt.Errorf("control: %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("control: %s %s: answer %.200q: %w", method, path, data, err)
		}
	}
	return nil
}
