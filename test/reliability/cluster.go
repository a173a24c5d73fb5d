package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// cluster is the fake RocketMQ cluster running in its own process (the fakebroker
// command), driven through its control endpoint.
type cluster struct {
	p       *proc
	nameSrv string
	control string // http://host:port
	http    *http.Client
	brokers []string
}

// clusterSpec says what to start.
type clusterSpec struct {
	brokers    int
	topics     map[string]int // topic → queues per broker
	delayScale float64        // 0: real delay levels
}

// startCluster starts the fake cluster process and waits until it serves.
func startCluster(dir, bin string, spec clusterSpec) (*cluster, error) {
	args := []string{"-namesrv", "127.0.0.1:0", "-control", "127.0.0.1:0", "-brokers", strconv.Itoa(spec.brokers)}
	for t, q := range spec.topics {
		args = append(args, "-topic", fmt.Sprintf("%s:%d", t, q))
	}
	if spec.delayScale > 0 {
		args = append(args, "-delay-scale", strconv.FormatFloat(spec.delayScale, 'g', -1, 64))
	}
	p, err := startProc(dir, "fakebroker", bin, args...)
	if err != nil {
		return nil, err
	}
	lines, err := p.waitForLine(30*time.Second, "ready line", func(l string) bool { return l == "ready" })
	if err != nil {
		_ = p.kill()
		return nil, err
	}
	c := &cluster{p: p, http: &http.Client{Transport: &http.Transport{}, Timeout: 60 * time.Second}}
	for _, l := range lines {
		switch f := strings.Fields(l); {
		case strings.HasPrefix(l, "name server "):
			c.nameSrv = f[2]
		case strings.HasPrefix(l, "control "):
			c.control = f[1]
		case strings.HasPrefix(l, "broker ") && len(f) == 3:
			c.brokers = append(c.brokers, f[1])
		}
	}
	if c.nameSrv == "" || c.control == "" || len(c.brokers) != spec.brokers {
		_ = c.close()
		return nil, fmt.Errorf("reliability: fakebroker printed %q: no name server, control or brokers", lines)
	}
	return c, nil
}

// close stops the cluster process.
func (c *cluster) close() error {
	c.http.CloseIdleConnections()
	return c.p.term(15 * time.Second)
}

// do sends a control request; out, when not nil, receives the JSON answer.
func (c *cluster) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.control+path, body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("reliability: control %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("reliability: control %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reliability: control %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("reliability: control %s %s: answer %.200q: %w", method, path, data, err)
		}
	}
	return nil
}

// broker runs a life-cycle action on a broker: stop, start, kill, pause, resume,
// close-connections, clear-faults.
func (c *cluster) broker(ctx context.Context, name, action string) error {
	return c.do(ctx, http.MethodPost, "/brokers/"+url.PathEscape(name)+"/"+action, nil, nil)
}

// fault is the control endpoint's fault specification (fakebroker.Fault in JSON).
type fault struct {
	Code   int32  `json:"code"`
	Drop   bool   `json:"drop,omitempty"`
	Fail   int32  `json:"fail,omitempty"`
	Remark string `json:"remark,omitempty"`
	Delay  string `json:"delay,omitempty"`
	Times  int    `json:"times,omitempty"`
	For    string `json:"for,omitempty"`
}

// inject puts a fault in force on a broker.
func (c *cluster) inject(ctx context.Context, name string, f fault) error {
	return c.do(ctx, http.MethodPost, "/brokers/"+url.PathEscape(name)+"/faults", f, nil)
}

// produce stores one message per body in topic, round robin over its queues.
func (c *cluster) produce(ctx context.Context, topic string, bodies []string) error {
	const chunk = 20000
	for i := 0; i < len(bodies); i += chunk {
		var out struct{ Count int }
		part := bodies[i:min(i+chunk, len(bodies))]
		if err := c.do(ctx, http.MethodPost, "/produce", map[string]any{"topic": topic, "bodies": part}, &out); err != nil {
			return err
		}
		if out.Count != len(part) {
			return fmt.Errorf("reliability: produce: %d of %d stored", out.Count, len(part))
		}
	}
	return nil
}

// queueOffsets is one queue's offsets (Committed -1: none).
type queueOffsets struct {
	Broker    string `json:"broker"`
	QueueID   int32  `json:"queueId"`
	Min       int64  `json:"min"`
	Max       int64  `json:"max"`
	Committed int64  `json:"committed"`
}

// queueKey identifies a queue of the scenario's topic.
type queueKey struct {
	broker string
	id     int32
}

func (k queueKey) String() string { return fmt.Sprintf("%s/%d", k.broker, k.id) }

// offsets returns group's offsets on topic's queues.
func (c *cluster) offsets(ctx context.Context, group, topic string) (map[queueKey]queueOffsets, error) {
	var list []queueOffsets
	q := url.Values{"group": {group}, "topic": {topic}}
	if err := c.do(ctx, http.MethodGet, "/offsets?"+q.Encode(), nil, &list); err != nil {
		return nil, err
	}
	out := make(map[queueKey]queueOffsets, len(list))
	for _, o := range list {
		out[queueKey{o.Broker, o.QueueID}] = o
	}
	return out, nil
}

// storedMessage is a message as the control endpoint lists it.
type storedMessage struct {
	Broker         string            `json:"broker"`
	QueueID        int32             `json:"queueId"`
	QueueOffset    int64             `json:"queueOffset"`
	Body           string            `json:"body"`
	ReconsumeTimes int32             `json:"reconsumeTimes"`
	BornTimestamp  int64             `json:"bornTimestamp"`
	StoreTimestamp int64             `json:"storeTimestamp"`
	Properties     map[string]string `json:"properties"`
}

// messages returns up to limit messages of topic.
func (c *cluster) messages(ctx context.Context, topic string, limit int) ([]storedMessage, error) {
	var out []storedMessage
	q := url.Values{"topic": {topic}, "limit": {strconv.Itoa(limit)}}
	err := c.do(ctx, http.MethodGet, "/messages?"+q.Encode(), nil, &out)
	return out, err
}
