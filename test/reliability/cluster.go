package reliability

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/test/fakebroker/control"
)

// cluster is the fake RocketMQ cluster running in its own process (the fakebroker
// command), driven through its control endpoint.
type cluster struct {
	*control.Client
	p       *proc
	nameSrv string
	brokers []string
}

// clusterSpec says what to start.
type clusterSpec struct {
	brokers    int
	topics     map[string]int // topic → queues per broker
	delayScale float64        // 0: real delay levels
}

// offsetReorder is how late, at most, every scenario's brokers process a pull or an
// offset update (fakebroker -out-of-order-offsets): as a real broker's two thread pools
// do, an older offset can then be stored after a newer one unless the consumer never
// lets both be in flight. Each scenario checks that no write moved an offset back.
const offsetReorder = 2 * time.Millisecond

// startCluster starts the fake cluster process and waits until it serves.
func startCluster(dir, bin string, spec clusterSpec) (*cluster, error) {
	args := []string{"-namesrv", "127.0.0.1:0", "-control", "127.0.0.1:0", "-brokers", strconv.Itoa(spec.brokers),
		"-out-of-order-offsets", offsetReorder.String()}
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
	c := &cluster{p: p}
	var endpoint string
	for _, l := range lines {
		switch f := strings.Fields(l); {
		case strings.HasPrefix(l, "name server "):
			c.nameSrv = f[2]
		case strings.HasPrefix(l, "control "):
			endpoint = f[1]
		case strings.HasPrefix(l, "broker ") && len(f) == 3:
			c.brokers = append(c.brokers, f[1])
		}
	}
	if endpoint != "" {
		c.Client = control.NewClient(endpoint)
	}
	if c.nameSrv == "" || endpoint == "" || len(c.brokers) != spec.brokers {
		_ = c.close()
		return nil, fmt.Errorf("reliability: fakebroker printed %q: no name server, control or brokers", lines)
	}
	return c, nil
}

// close stops the cluster process.
func (c *cluster) close() error {
	if c.Client != nil {
		c.Client.Close()
	}
	return c.p.term(15 * time.Second)
}

// queueKey identifies a queue of the scenario's topic.
type queueKey struct {
	broker string
	id     int32
}

func (k queueKey) String() string { return fmt.Sprintf("%s/%d", k.broker, k.id) }

// offsetsByQueue returns group's offsets on topic's queues.
func (c *cluster) offsetsByQueue(ctx context.Context, group, topic string) (map[queueKey]control.QueueOffsets, error) {
	list, err := c.Offsets(ctx, group, topic)
	if err != nil {
		return nil, err
	}
	out := make(map[queueKey]control.QueueOffsets, len(list))
	for _, o := range list {
		out[queueKey{o.Broker, o.QueueID}] = o
	}
	return out, nil
}
