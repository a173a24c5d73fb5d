package fakebroker

import (
	"context"
	"fmt"
	"slices"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// Calls the broker makes to its clients (Broker2Client), as admin tools trigger them.
// Those that wait for an answer run on the caller's goroutine, never on a read loop.

// versionV3_0_7 is the first client version the broker resets offsets of (V3_0_7_SNAPSHOT).
const versionV3_0_7 = 28

// memberConn returns the connection of clientID in group.
func (b *Broker) memberConn(group, clientID string) (conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if g := b.groups[group]; g != nil {
		for _, m := range g.members {
			if m.clientID == clientID {
				return m.sc, nil
			}
		}
	}
	return nil, fmt.Errorf("fakebroker: broker %s: the consumer <%s> of group <%s> is not online", b.name, clientID, group)
}

// call sends a request to a client and checks the answer is SUCCESS.
func (b *Broker) call(ctx context.Context, sc conn, req *remoting.Command) (*remoting.Command, error) {
	resp, err := sc.Invoke(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("fakebroker: broker %s: %s to %s: %w", b.name, protocol.RequestName(req.Code), sc.RemoteAddr(), err)
	}
	if resp.Code != protocol.ResponseSuccess {
		return nil, protocol.NewBrokerError(sc.RemoteAddr(), req, resp)
	}
	return resp, nil
}

// ConsumerRunningInfo asks a connected consumer for its running info
// (GET_CONSUMER_RUNNING_INFO, what `mqadmin consumerStatus` has the broker do) and
// decodes the answer. It waits for the answer or ctx.
func (b *Broker) ConsumerRunningInfo(ctx context.Context, group, clientID string, jstack bool) (*ConsumerRunningInfo, error) {
	sc, err := b.memberConn(group, clientID)
	if err != nil {
		return nil, err
	}
	hdr := protocol.GetConsumerRunningInfoRequest{ConsumerGroup: group, ClientID: clientID, JstackEnable: jstack}
	resp, err := b.call(ctx, sc, newRequest(protocol.RequestGetConsumerRunningInfo, hdr.Encode(), nil))
	if err != nil {
		return nil, err
	}
	var info protocol.ConsumerRunningInfo
	if err := info.Decode(resp.Body); err != nil {
		return nil, fmt.Errorf("fakebroker: broker %s: running info of %s: %w", b.name, clientID, err)
	}
	return &info, nil
}

// ConsumeMessageDirectly has a connected consumer consume the message with the given
// offsetMsgId (CONSUME_MESSAGE_DIRECTLY, what `mqadmin queryMsgById -g -d` has the
// broker do): the request carries the stored record as its body and the broker's name.
// It waits for the answer or ctx.
func (b *Broker) ConsumeMessageDirectly(ctx context.Context, group, clientID, offsetMsgID string) (*ConsumeMessageDirectlyResult, error) {
	_, offset, err := message.ParseOffsetMsgID(offsetMsgID)
	if err != nil {
		return nil, fmt.Errorf("fakebroker: ConsumeMessageDirectly: %w", err)
	}
	b.mu.Lock()
	rec := b.log.record(offset)
	body := append([]byte(nil), rec...)
	b.mu.Unlock()
	if rec == nil {
		return nil, fmt.Errorf("fakebroker: broker %s: no message at commit-log offset %d (%s)", b.name, offset, offsetMsgID)
	}
	sc, err := b.memberConn(group, clientID)
	if err != nil {
		return nil, err
	}
	hdr := protocol.ConsumeMessageDirectlyRequest{ConsumerGroup: group, ClientID: clientID, MsgID: offsetMsgID, BrokerName: b.name}
	resp, err := b.call(ctx, sc, newRequest(protocol.RequestConsumeMessageDirectly, hdr.Encode(), body))
	if err != nil {
		return nil, err
	}
	var res protocol.ConsumeMessageDirectlyResult
	if err := res.Decode(resp.Body); err != nil {
		return nil, fmt.Errorf("fakebroker: broker %s: consume-directly result of %s: %w", b.name, clientID, err)
	}
	return &res, nil
}

// ConsumerStatus asks the group's consumers (or only clientID, when not empty) for their
// offsets of topic (GET_CONSUMER_STATUS_FROM_CLIENT, Broker2Client.getConsumeStatus) and
// returns them by client id. A client that fails to answer is left out, as in 4.9.8.
func (b *Broker) ConsumerStatus(ctx context.Context, group, topic, clientID string) (map[string]map[message.Queue]int64, error) {
	b.mu.Lock()
	var members []*member
	if g := b.groups[group]; g != nil {
		members = slices.Clone(g.members)
	}
	b.mu.Unlock()
	if len(members) == 0 {
		return nil, fmt.Errorf("fakebroker: broker %s: no consumer of group %s is online", b.name, group)
	}
	out := make(map[string]map[message.Queue]int64)
	for _, m := range members {
		if clientID != "" && m.clientID != clientID {
			continue
		}
		hdr := protocol.GetConsumerStatusRequest{Topic: topic, Group: group, ClientAddr: clientID}
		resp, err := b.call(ctx, m.sc, newRequest(protocol.RequestGetConsumerStatusFromClient, hdr.Encode(), nil))
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			continue
		}
		var body protocol.ConsumerStatusBody
		if resp.Body != nil && body.Decode(resp.Body) == nil {
			out[m.clientID] = body.MessageQueueTable
		}
		if clientID != "" {
			break
		}
	}
	return out, nil
}

// ResetOffsetByTime is what `mqadmin resetOffsetByTime` has a broker do
// (Broker2Client.resetOffset): for each write queue of topic, the offset of the message
// stored at timestamp (ms; -1 means the max offset), or the group's committed offset if
// that is smaller and force is off; then a oneway RESET_CONSUMER_CLIENT_OFFSET with those
// offsets to every connected consumer of the group (with isForce "false", as 4.9.8
// writes it). It fails when the topic is not on this broker, the group has no committed
// offset for one of the queues, or no consumer of the group is connected. As in 4.9.8,
// the broker's committed offsets do not change: the clients commit the new ones.
func (b *Broker) ResetOffsetByTime(group, topic string, timestamp int64, force bool) (map[message.Queue]int64, error) {
	offsets, code, remark := b.resetOffset(group, topic, timestamp, force, false)
	if code != protocol.ResponseSuccess {
		return nil, fmt.Errorf("fakebroker: broker %s: reset offset: %s (%s)", b.name, remark, protocol.ResponseName(code))
	}
	return offsets, nil
}

// resetOffset computes the offsets and tells the clients; cpp selects the C++ client's
// list body. It returns the answer's code and remark for INVOKE_BROKER_TO_RESET_OFFSET.
func (b *Broker) resetOffset(group, topic string, timestamp int64, force, cpp bool) (map[message.Queue]int64, int32, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[topic]
	if t == nil {
		return nil, protocol.ResponseSystemError, "[reset-offset] reset offset failed, no topic in this broker. topic=" + topic
	}
	table := make(map[message.Queue]int64, t.write)
	for i := int32(0); i < t.write; i++ {
		consumed, ok := b.offsets[offsetKey{group: group, topic: topic, queue: i}]
		if !ok || consumed < 0 {
			return nil, protocol.ResponseSystemError, fmt.Sprintf("THe consumer group <%s> not exist", group)
		}
		var at int64
		if timestamp == -1 {
			at = b.maxOffsetLocked(topic, i)
		} else {
			at = b.offsetByTimeLocked(topic, i, timestamp)
		}
		at = max(at, 0)
		mq := message.Queue{Topic: topic, BrokerName: b.name, QueueID: i}
		if force || at < consumed {
			table[mq] = at
		} else {
			table[mq] = consumed
		}
	}
	g := b.groups[group]
	if g == nil || len(g.members) == 0 {
		return nil, protocol.ResponseConsumerNotOnline, fmt.Sprintf(
			"Consumer not online, so can not reset offset, Group: %s Topic: %s Timestamp: %d", group, topic, timestamp)
	}
	for _, m := range g.members {
		if m.version < versionV3_0_7 {
			return nil, protocol.ResponseSystemError, fmt.Sprintf("the client does not support this feature. version=%d", m.version)
		}
	}
	rb := protocol.ResetOffsetBody{OffsetTable: table}
	var body []byte
	if cpp {
		body = rb.EncodeList(protocol.StyleFastjson)
	} else {
		body = rb.Encode(protocol.StyleFastjson)
	}
	for _, m := range g.members {
		hdr := protocol.ResetOffsetRequest{Topic: topic, Group: group, Timestamp: timestamp}
		b.ep.oneway(m.sc, newRequest(protocol.RequestResetConsumerClientOffset, hdr.Encode(), body))
	}
	return table, protocol.ResponseSuccess, ""
}

// NotifyConsumerIDsChanged sends NOTIFY_CONSUMER_IDS_CHANGED to every connected member of
// group now, as the broker does when members change.
func (b *Broker) NotifyConsumerIDsChanged(group string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if g := b.groups[group]; g != nil {
		b.notifyChanged(g)
	}
}
