package benchrun

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
)

// latencyBodySize is the body size of the latency scenario's messages.
const latencyBodySize = 128

// produceSteady sends messages to topic at rate per second, round robin over its
// queues, for warmup (flagged as warm-up in the body) and then duration, each with its
// send time in the body. Sends are synchronous (SEND_MESSAGE_V2, as internal/client's
// SendMessage makes them, the transport the examples produce with) and paced on an
// absolute schedule, so a slow send is caught up by the next ones. It returns how many
// it sent.
func produceSteady(ctx context.Context, nameSrv, topic string, rate int, warmup, duration time.Duration) (int, error) {
	inst, err := client.New(client.Config{NameServers: []string{nameSrv},
		ClientID: fmt.Sprintf("127.0.0.1@bench-producer-%08x", rand.Uint32())})
	if err != nil {
		return 0, err
	}
	defer inst.Shutdown()
	if _, err := inst.UpdateTopicRoute(ctx, topic); err != nil {
		return 0, err
	}
	queues, _ := inst.WritableQueues(topic)
	if len(queues) == 0 {
		return 0, fmt.Errorf("benchrun: topic %s has no writable queue", topic)
	}
	interval := time.Second / time.Duration(rate)
	warmN := int(warmup / interval)
	total := warmN + int(duration/interval)
	start := time.Now()
	for i := range total {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		if err := ctx.Err(); err != nil {
			return i, err
		}
		m := &message.Message{Topic: topic, Body: make([]byte, latencyBodySize)}
		m.Properties.Set(message.PropertyUniqKey, fmt.Sprintf("7F00000100002A9F00000000%08X", i))
		m.Properties.Set(message.PropertyWaitStoreMsgOK, "true")
		benchkit.EncodeBody(m.Body, time.Now().UnixNano(), i < warmN)
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := inst.SendMessage(sctx, "bench-producer", queues[i%len(queues)], m)
		cancel()
		if err != nil {
			return i, fmt.Errorf("benchrun: send %d of %d: %w", i+1, total, err)
		}
	}
	return total, nil
}
