package fakebroker

import (
	"slices"
	"strings"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// QUERY_ASSIGNMENT (400) and SET_MESSAGE_REQUEST_MODE (401); 5.3.3's
// QueryAssignmentProcessor, with WithRocketMQ5.
//
// QUERY_ASSIGNMENT supported: the topic's readable queues of every broker in the
// routes, sorted as Java sorts MessageQueues, and the group's members on this broker,
// sorted; the group's mode on the topic (SetConsumeMode; PULL by default, always PULL
// for a retry topic). BROADCASTING gets every queue. CLUSTERING in PULL mode allocates
// with the named strategy (the broker knows AVG and AVG_BY_CIRCLE); in POP mode with
// allocate4Pop: every member pops every queue, as one queue -1 per broker, when
// popShareQueueNum is 0 or at least the members less one; else each member pops its
// own queues and those of the popShareQueueNum members after it, or, with more members
// than queues, the queue at its index. An unknown topic, an unknown strategy or a group
// without members answers a body without assignments (null: the client keeps what it
// has); a client not among the members gets an empty list. Assignments are written
// sorted (Java's order is a HashSet's).
//
// SET_MESSAGE_REQUEST_MODE supported: NO_PERMISSION for a retry topic, TOPIC_NOT_EXIST,
// else the mode is kept (not persisted across a cluster's life, as everything here).
//
// Left out: LMQ topics, serverLoadBalancerEnable=false, GET_ALL_MESSAGE_REQUEST_MODE.
func (b *Broker) queryAssignment(sc conn, req *remoting.Command) *remoting.Command {
	var body protocol.QueryAssignmentRequest
	if err := body.Decode(req.Body); err != nil {
		return badBody(sc, req, err)
	}
	var all []message.Queue // before b.mu: the route reads every broker
	if rd, ok := b.c.route(body.Topic); ok {
		all = rd.ReadableQueues(body.Topic)
	}
	slices.SortFunc(all, message.Queue.Compare)

	b.mu.Lock()
	mode := b.requestMode(body.Topic, body.ConsumerGroup)
	var cids []string
	if g := b.groups[body.ConsumerGroup]; g != nil {
		cids = g.clientIDs()
	}
	b.mu.Unlock()
	slices.Sort(cids)
	cids = slices.Compact(cids)

	resp := newResponse(req, protocol.ResponseSuccess, "")
	var out protocol.QueryAssignmentResponse
	if qs, ok := assign(body, mode, all, cids); ok {
		out.Assignments = make([]protocol.QueueAssignment, 0, len(qs))
		for _, q := range qs {
			out.Assignments = append(out.Assignments, protocol.QueueAssignment{Queue: q, Mode: mode.mode})
		}
	} else {
		out.Null = true
	}
	resp.Body = out.Encode(protocol.StyleStandard)
	return resp
}

// assign is doLoadBalance: the queues of all the client gets, and false for "no answer".
func assign(r protocol.QueryAssignmentRequest, mode modeEntry, all []message.Queue, cids []string) ([]message.Queue, bool) {
	if r.MessageModel == protocol.Broadcasting {
		return all, len(all) > 0
	}
	if len(all) == 0 || len(cids) == 0 {
		return nil, false
	}
	var strategy func(all []message.Queue, cids []string, index int) []message.Queue
	switch r.StrategyName {
	case "AVG":
		strategy = allocateAveragely
	case "AVG_BY_CIRCLE":
		strategy = allocateByCircle
	default:
		return nil, false // "QueryLoad: unsupported strategy"
	}
	index := slices.Index(cids, r.ClientID)
	if index < 0 {
		return []message.Queue{}, true // AllocateMessageQueueStrategy.check: not in the list
	}
	if mode.mode != protocol.RequestModePop {
		return strategy(all, cids, index), true
	}
	// allocate4Pop
	var out []message.Queue
	switch {
	case mode.share <= 0 || int(mode.share) >= len(cids)-1:
		for _, q := range all {
			q.QueueID = -1
			if !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
	case len(cids) <= len(all):
		out = strategy(all, cids, index)
		for i := 1; i <= int(mode.share); i++ {
			for _, q := range strategy(all, cids, (index+i)%len(cids)) {
				if !slices.Contains(out, q) {
					out = append(out, q)
				}
			}
		}
	default:
		out = []message.Queue{all[index%len(all)]}
	}
	slices.SortFunc(out, message.Queue.Compare)
	return out, true
}

// allocateAveragely is AllocateMessageQueueAveragely for the client at index.
func allocateAveragely(all []message.Queue, cids []string, index int) []message.Queue {
	n, m := len(all), len(cids)
	mod := n % m
	size := n / m
	if n <= m {
		size = 1
	} else if mod > 0 && index < mod {
		size++
	}
	start := index*size + mod
	if mod > 0 && index < mod {
		start = index * size
	}
	var out []message.Queue
	for i := 0; i < min(size, n-start); i++ {
		out = append(out, all[(start+i)%n])
	}
	return out
}

// allocateByCircle is AllocateMessageQueueAveragelyByCircle for the client at index.
func allocateByCircle(all []message.Queue, cids []string, index int) []message.Queue {
	var out []message.Queue
	for i, q := range all {
		if i%len(cids) == index {
			out = append(out, q)
		}
	}
	return out
}

func (b *Broker) setMessageRequestMode(sc conn, req *remoting.Command) *remoting.Command {
	var body protocol.SetMessageRequestModeRequest
	if err := body.Decode(req.Body); err != nil {
		return badBody(sc, req, err)
	}
	b.mu.Lock()
	code, remark := b.setRequestMode(&body)
	b.mu.Unlock()
	return newResponse(req, code, remark)
}

// SetConsumeMode sets how group consumes topic, on every broker that has the topic, as
// mqadmin setConsumeMode -c <cluster> does: POP or PULL, and popShareQueueNum (see
// Broker.SetConsumeMode). It fails when no broker has the topic.
func (c *Cluster) SetConsumeMode(group, topic, mode string, popShareQueueNum int) error {
	m := protocol.MessageRequestMode(strings.ToUpper(mode))
	if m != protocol.RequestModePop && m != protocol.RequestModePull {
		return &modeError{broker: "*", code: protocol.ResponseSystemError, remark: "mode " + mode + " is neither POP nor PULL"}
	}
	set := 0
	for _, b := range c.brokers {
		if _, ok := b.Topic(topic); !ok {
			continue
		}
		if err := b.SetConsumeMode(group, topic, m, popShareQueueNum); err != nil {
			return err
		}
		set++
	}
	if set == 0 {
		return &modeError{broker: "*", code: protocol.ResponseTopicNotExist, remark: "topic[" + topic + "] not exist"}
	}
	return nil
}
