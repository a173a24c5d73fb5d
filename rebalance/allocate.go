package rebalance

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rmqpush/rmqpush/message"
)

// Strategy names, as Java's getName returns them. They appear in logs and in the
// consumer running info.
const (
	NameAveragely         = "AVG"
	NameAveragelyByCircle = "AVG_BY_CIRCLE"
	NameByConfig          = "CONFIG"
	NameByMachineRoom     = "MACHINE_ROOM"
	// NameMachineRoomNearby is the prefix of MachineRoomNearby's name, which Java
	// completes with "-" and the name of the strategy it wraps ("MACHINE_ROOM_NEARBY-AVG").
	NameMachineRoomNearby = "MACHINE_ROOM_NEARBY"
	NameConsistentHash    = "CONSISTENT_HASH"
)

// AllocateStrategy decides which queues of one topic a consumer client consumes.
//
// The caller passes every queue of the topic sorted by message.Queue.Compare and every
// client id of the group sorted in ascending order, as Java's RebalanceImpl does before
// it calls a strategy (Java sorts strings by UTF-16 code units and Go by bytes; the two
// orders differ only between characters above U+FFFF and those in U+E000..U+FFFF, which
// client ids do not contain). Every client of the group computes its own share from the
// same lists, so a strategy must be a pure function of its arguments: given the same
// lists, the shares of all clients together cover each queue once (except ByConfig,
// which ignores the lists). Strategies neither sort nor modify the lists, and the
// returned slice never shares memory with them.
//
// Errors: when currentCID is empty or mqAll or cidAll is empty, Allocate returns an
// error and the caller keeps its current queues, as Java's RebalanceImpl does when a
// strategy throws. When currentCID is not in cidAll (the broker has not seen this
// client's heartbeat yet), Allocate returns an empty result and an error wrapping
// ErrConsumerNotInList: the caller logs it and, as Java does with the empty list, applies
// the empty result.
type AllocateStrategy interface {
	// Name returns Java's name for the strategy.
	Name() string
	// Allocate returns the queues of mqAll that client currentCID of consumer group
	// group consumes, in mqAll's order unless the strategy says otherwise.
	Allocate(group, currentCID string, mqAll []message.Queue, cidAll []string) ([]message.Queue, error)
}

// ErrConsumerNotInList is wrapped by the error Allocate returns when the current client
// id is not in the group's client-id list. The result is then empty and should be
// applied.
var ErrConsumerNotInList = errors.New("rebalance: consumer id not in the list")

// check applies Java's argument checks (AbstractAllocateMessageQueueStrategy.check) and
// returns the index of currentCID in cidAll (its first occurrence, as Java's indexOf).
func check(name, group, currentCID string, mqAll []message.Queue, cidAll []string) (int, error) {
	if currentCID == "" {
		return -1, fmt.Errorf("rebalance: %s: group %q: current consumer id is empty", name, group)
	}
	if len(mqAll) == 0 {
		return -1, fmt.Errorf("rebalance: %s: group %q: no message queue to allocate", name, group)
	}
	if len(cidAll) == 0 {
		return -1, fmt.Errorf("rebalance: %s: group %q: consumer id list is empty", name, group)
	}
	return indexIn(name, group, currentCID, cidAll)
}

// indexIn returns the index of the first occurrence of currentCID in cidAll, or an error
// wrapping ErrConsumerNotInList.
func indexIn(name, group, currentCID string, cidAll []string) (int, error) {
	i := slices.Index(cidAll, currentCID)
	if i < 0 {
		return -1, fmt.Errorf("%w: %s: group %q: consumer %q is not among the group's %d consumer ids",
			ErrConsumerNotInList, name, group, currentCID, len(cidAll))
	}
	return i, nil
}
