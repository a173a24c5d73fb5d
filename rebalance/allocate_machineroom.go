package rebalance

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rmqpush/rmqpush/message"
)

// ByMachineRoom is Java's AllocateMessageQueueByMachineRoom ("MACHINE_ROOM"), for
// brokers named "<idc>@<broker>": only queues of brokers in the configured consumer
// IDCs are allocated, split among all clients in contiguous ranges, and the remainder
// dealt one each to the first clients. Queues of other brokers go to no one.
//
// Java's broker-name rule is kept exactly: the name is split at '@' as Java's
// String.split("@") does (trailing empty parts dropped), and it qualifies when that gives
// exactly two parts and the first is a configured IDC. rocketmq-client-go's version of
// this strategy indexes the wrong list and hands out the wrong queues; this one does
// what Java does.
type ByMachineRoom struct {
	idcs map[string]struct{}
}

// NewByMachineRoom returns a ByMachineRoom for the machine rooms (IDCs) whose brokers
// this group consumes.
func NewByMachineRoom(consumerIDCs ...string) *ByMachineRoom {
	idcs := make(map[string]struct{}, len(consumerIDCs))
	for _, idc := range consumerIDCs {
		idcs[idc] = struct{}{}
	}
	return &ByMachineRoom{idcs: idcs}
}

// Name returns "MACHINE_ROOM".
func (*ByMachineRoom) Name() string { return NameByMachineRoom }

// Allocate returns currentCID's share of the queues in the configured IDCs. It applies
// the common argument checks, which Java's version skips: Java returns an empty list
// for an empty queue list, where this returns an error.
func (r *ByMachineRoom) Allocate(group, currentCID string, mqAll []message.Queue, cidAll []string) ([]message.Queue, error) {
	index, err := check(NameByMachineRoom, group, currentCID, mqAll, cidAll)
	if err != nil {
		return []message.Queue{}, err
	}
	pre := make([]message.Queue, 0, len(mqAll))
	for _, q := range mqAll {
		if idc, ok := machineRoomOf(q.BrokerName); ok {
			if _, in := r.idcs[idc]; in {
				pre = append(pre, q)
			}
		}
	}
	nc := len(cidAll)
	per, rem := len(pre)/nc, len(pre)%nc
	out := make([]message.Queue, 0, per+1)
	out = append(out, pre[per*index:per*index+per]...)
	if rem > index {
		out = append(out, pre[index+per*nc])
	}
	return out, nil
}

// machineRoomOf returns the IDC of a broker named "<idc>@<broker>" by Java's rule:
// name.split("@") must give exactly two parts once trailing empty parts are dropped.
// Dropping trailing empty parts is dropping trailing '@'s; two parts then means exactly
// one '@' left.
func machineRoomOf(brokerName string) (string, bool) {
	s := strings.TrimRight(brokerName, "@")
	i := strings.IndexByte(s, '@')
	if i < 0 || strings.IndexByte(s[i+1:], '@') >= 0 {
		return "", false
	}
	return s[:i], true
}

// MachineRoomNearby is Java's AllocateMachineRoomNearby: it prefers consumers in the
// broker's own machine room. The queues of a machine room with at least one client of
// the group are shared, by the wrapped strategy, among that room's clients only; the
// queues of a room without clients are shared, by the wrapped strategy, among all
// clients. The result lists the current client's own room first, then the other rooms
// in ascending order of room name, as Java's TreeMap walk does.
type MachineRoomNearby struct {
	inner        AllocateStrategy
	brokerRoom   func(message.Queue) string
	consumerRoom func(clientID string) string
}

// NewMachineRoomNearby returns a MachineRoomNearby around inner. brokerRoom names the
// machine room of a queue's broker and consumerRoom the machine room of a client id
// (Java's MachineRoomResolver); both must return a non-empty name for every queue and
// client, and be the same functions on every client of the group.
func NewMachineRoomNearby(inner AllocateStrategy, brokerRoom func(message.Queue) string, consumerRoom func(clientID string) string) (*MachineRoomNearby, error) {
	switch {
	case inner == nil:
		return nil, errors.New("rebalance: machine room nearby: the wrapped strategy is nil")
	case brokerRoom == nil:
		return nil, errors.New("rebalance: machine room nearby: the broker machine room resolver is nil")
	case consumerRoom == nil:
		return nil, errors.New("rebalance: machine room nearby: the consumer machine room resolver is nil")
	}
	return &MachineRoomNearby{inner: inner, brokerRoom: brokerRoom, consumerRoom: consumerRoom}, nil
}

// Name returns Java's name: "MACHINE_ROOM_NEARBY-" followed by the wrapped strategy's.
func (n *MachineRoomNearby) Name() string { return NameMachineRoomNearby + "-" + n.inner.Name() }

// Allocate returns currentCID's queues. It fails when a resolver returns an empty room
// name, naming the queue or client, and when the wrapped strategy fails (except for
// ErrConsumerNotInList from it, whose empty result is used as Java uses the empty list).
func (n *MachineRoomNearby) Allocate(group, currentCID string, mqAll []message.Queue, cidAll []string) ([]message.Queue, error) {
	name := n.Name()
	if _, err := check(name, group, currentCID, mqAll, cidAll); err != nil {
		return []message.Queue{}, err
	}

	mqByRoom := map[string][]message.Queue{}
	for _, q := range mqAll {
		room := n.brokerRoom(q)
		if room == "" {
			return []message.Queue{}, fmt.Errorf("rebalance: %s: group %q: no machine room for queue %s", name, group, q)
		}
		mqByRoom[room] = append(mqByRoom[room], q)
	}
	cidByRoom := map[string][]string{}
	for _, cid := range cidAll {
		room := n.consumerRoom(cid)
		if room == "" {
			return []message.Queue{}, fmt.Errorf("rebalance: %s: group %q: no machine room for consumer %q", name, group, cid)
		}
		cidByRoom[room] = append(cidByRoom[room], cid)
	}

	var out []message.Queue
	// 1. The queues of the current client's room, among the clients of that room.
	myRoom := n.consumerRoom(currentCID)
	if mqs := mqByRoom[myRoom]; len(mqs) > 0 {
		got, err := n.allocateInner(group, currentCID, mqs, cidByRoom[myRoom])
		if err != nil {
			return []message.Queue{}, err
		}
		out = append(out, got...)
	}
	delete(mqByRoom, myRoom)
	// 2. The queues of rooms without clients, among all clients.
	rooms := make([]string, 0, len(mqByRoom))
	for room := range mqByRoom {
		rooms = append(rooms, room)
	}
	slices.Sort(rooms)
	for _, room := range rooms {
		if _, alive := cidByRoom[room]; alive {
			continue
		}
		got, err := n.allocateInner(group, currentCID, mqByRoom[room], cidAll)
		if err != nil {
			return []message.Queue{}, err
		}
		out = append(out, got...)
	}
	if out == nil {
		out = []message.Queue{}
	}
	return out, nil
}

func (n *MachineRoomNearby) allocateInner(group, currentCID string, mqs []message.Queue, cids []string) ([]message.Queue, error) {
	got, err := n.inner.Allocate(group, currentCID, mqs, cids)
	if errors.Is(err, ErrConsumerNotInList) {
		return nil, nil
	}
	return got, err
}
