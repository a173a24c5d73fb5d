package benchrun

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// admin creates topics and preloads them over the remoting protocol, as mqadmin and a
// batching producer would: UPDATE_AND_CREATE_TOPIC to the master, then
// SEND_BATCH_MESSAGE.
type admin struct {
	rc      *remoting.Client
	nameSrv string
	broker  string // the master topics are created on
}

func newAdmin(nameSrv, broker string) (*admin, error) {
	rc, err := remoting.NewClient()
	if err != nil {
		return nil, err
	}
	return &admin{rc: rc, nameSrv: nameSrv, broker: broker}, nil
}

func (a *admin) close() { _ = a.rc.Close() }

func (a *admin) invoke(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := a.rc.Invoke(ctx, addr, req)
	if err != nil {
		return nil, err
	}
	if resp.Code != protocol.ResponseSuccess {
		return nil, fmt.Errorf("%s to %s: code %d: %s", protocol.RequestName(req.Code), addr, resp.Code, resp.Remark)
	}
	return resp, nil
}

// createTopic creates topic with queues read and write queues on the broker and waits
// until the name server routes it.
func (a *admin) createTopic(ctx context.Context, topic string, queues int) error {
	h := protocol.CreateTopicRequest{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: int32(queues),
		WriteQueueNums: int32(queues), Perm: protocol.PermRead | protocol.PermWrite}
	if _, err := a.invoke(ctx, a.broker, remoting.NewRequest(protocol.RequestUpdateAndCreateTopic, h.Encode(), nil)); err != nil {
		return fmt.Errorf("benchrun: create topic %s: %w", topic, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := a.route(ctx, topic)
		if err == nil && len(r.ReadableQueues(topic)) == queues {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("benchrun: topic %s not routed with %d queues after 30s (last error: %v)", topic, queues, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// setPop sets group to consume topic by POP, every member popping every queue, as
// mqadmin setConsumeMode -m POP -q 0 does (SET_MESSAGE_REQUEST_MODE to the master).
func (a *admin) setPop(ctx context.Context, group, topic string) error {
	body := (&protocol.SetMessageRequestModeRequest{Topic: topic, ConsumerGroup: group, Mode: protocol.RequestModePop}).Encode(protocol.StyleStandard)
	if _, err := a.invoke(ctx, a.broker, remoting.NewRequest(protocol.RequestSetMessageRequestMode, nil, body)); err != nil {
		return fmt.Errorf("benchrun: set %s to POP on %s: %w", group, topic, err)
	}
	return nil
}

func (a *admin) route(ctx context.Context, topic string) (*protocol.TopicRouteData, error) {
	h := protocol.GetRouteInfoRequest{Topic: topic}
	resp, err := a.invoke(ctx, a.nameSrv, remoting.NewRequest(protocol.RequestGetRouteInfoByTopic, h.Encode(), nil))
	if err != nil {
		return nil, err
	}
	r := new(protocol.TopicRouteData)
	if err := r.Decode(resp.Body); err != nil {
		return nil, err
	}
	return r, nil
}

// batchBytes bounds one SEND_BATCH_MESSAGE body (a real broker's limit is 4 MiB).
const batchBytes = 512 << 10

// inflightBatches is how many batch sends preload keeps in flight.
const inflightBatches = 8

// preload stores n messages of size body bytes in topic, round robin over its queues,
// in batches. Each message has the properties a Java or Go producer gives it: UNIQ_KEY,
// WAIT and TAGS.
func (a *admin) preload(ctx context.Context, topic string, n, size int) error {
	r, err := a.route(ctx, topic)
	if err != nil {
		return fmt.Errorf("benchrun: route of %s: %w", topic, err)
	}
	queues := r.WritableQueues(topic)
	if len(queues) == 0 {
		return fmt.Errorf("benchrun: topic %s has no writable queue", topic)
	}
	perBatch := max(1, min(1000, batchBytes/(size+100)))
	body := make([]byte, size)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = fmt.Errorf("benchrun: preload %s: %w", topic, err)
		}
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil
	}
	slots := make(chan struct{}, inflightBatches)
	uniq := 0
	for sent, b := 0, 0; sent < n && !failed(); b++ {
		q := queues[b%len(queues)]
		addr, ok := r.MasterAddr(q.BrokerName)
		if !ok {
			return fmt.Errorf("benchrun: no master address of %s", q.BrokerName)
		}
		k := min(perBatch, n-sent)
		msgs := make([]*message.Message, k)
		for j := range msgs {
			m := &message.Message{Body: body}
			m.Properties.Set(message.PropertyUniqKey, fmt.Sprintf("7F00000100002A9F0000000000%06X", uniq&0xffffff))
			m.Properties.Set(message.PropertyWaitStoreMsgOK, "true")
			m.Properties.Set(message.PropertyTags, "TagA")
			msgs[j] = m
			uniq++
		}
		batch, err := message.EncodeBatch(msgs)
		if err != nil {
			return err
		}
		h := protocol.SendMessageRequest{ProducerGroup: "bench-preload", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: q.QueueID, BornTimestamp: time.Now().UnixMilli(), Batch: true,
			BrokerName: q.BrokerName}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := a.sendBatch(ctx, addr, &h, batch); err != nil {
				fail(err)
			}
		}()
		sent += k
	}
	wg.Wait()
	return firstErr
}

// sendBatch sends one batch, again after a pause while a real broker says it is busy
// (SYSTEM_BUSY: "[TIMEOUT_CLEAN_QUEUE]broker busy", as it does when the machine is
// loaded), for at most a minute.
func (a *admin) sendBatch(ctx context.Context, addr string, h *protocol.SendMessageRequest, batch []byte) error {
	for deadline := time.Now().Add(time.Minute); ; {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := a.rc.Invoke(cctx, addr, remoting.NewRequest(protocol.RequestSendBatchMessage, h.EncodeV2(), batch))
		cancel()
		switch {
		case err != nil:
			return err
		case resp.Code == protocol.ResponseSuccess:
			return nil
		case resp.Code != protocol.ResponseSystemBusy || time.Now().After(deadline):
			return fmt.Errorf("code %d: %s", resp.Code, resp.Remark)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// maxOffsets returns the sum of topic's queues' max offsets (GET_MAX_OFFSET).
func (a *admin) maxOffsets(ctx context.Context, topic string) (int64, error) {
	r, err := a.route(ctx, topic)
	if err != nil {
		return 0, err
	}
	total := int64(0)
	for _, q := range r.ReadableQueues(topic) {
		addr, _ := r.MasterAddr(q.BrokerName)
		h := protocol.GetMaxOffsetRequest{Topic: topic, QueueID: q.QueueID}
		resp, err := a.invoke(ctx, addr, remoting.NewRequest(protocol.RequestGetMaxOffset, h.Encode(), nil))
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseInt(resp.ExtFields.Value("offset"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("GET_MAX_OFFSET answer without an offset: %w", err)
		}
		total += v
	}
	return total, nil
}
