package rebalance

import "github.com/rmqpush/rmqpush/message"

// Averagely is Java's AllocateMessageQueueAveragely ("AVG"), the default strategy: it
// splits the sorted queues into contiguous ranges, one per client in client-id order,
// the first len(mqAll)%len(cidAll) clients getting one queue more. With more clients
// than queues, the clients after the first len(mqAll) get nothing.
type Averagely struct{}

// Name returns "AVG".
func (Averagely) Name() string { return NameAveragely }

// Allocate returns currentCID's contiguous range of mqAll.
func (Averagely) Allocate(group, currentCID string, mqAll []message.Queue, cidAll []string) ([]message.Queue, error) {
	index, err := check(NameAveragely, group, currentCID, mqAll, cidAll)
	if err != nil {
		return []message.Queue{}, err
	}
	nq, nc := len(mqAll), len(cidAll)
	mod := nq % nc
	var size, start int
	switch {
	case nq <= nc:
		size = 1
	case mod > 0 && index < mod:
		size = nq/nc + 1
	default:
		size = nq / nc
	}
	if mod > 0 && index < mod {
		start = index * size
	} else {
		start = index*size + mod
	}
	n := min(size, nq-start)
	out := make([]message.Queue, 0, max(n, 0))
	for i := range n {
		out = append(out, mqAll[(start+i)%nq])
	}
	return out, nil
}

// AveragelyByCircle is Java's AllocateMessageQueueAveragelyByCircle ("AVG_BY_CIRCLE"):
// queue i goes to the client at index i % len(cidAll), dealing the sorted queues out
// like cards.
type AveragelyByCircle struct{}

// Name returns "AVG_BY_CIRCLE".
func (AveragelyByCircle) Name() string { return NameAveragelyByCircle }

// Allocate returns every len(cidAll)-th queue of mqAll, starting at currentCID's index.
func (AveragelyByCircle) Allocate(group, currentCID string, mqAll []message.Queue, cidAll []string) ([]message.Queue, error) {
	index, err := check(NameAveragelyByCircle, group, currentCID, mqAll, cidAll)
	if err != nil {
		return []message.Queue{}, err
	}
	out := make([]message.Queue, 0, (len(mqAll)+len(cidAll)-1)/len(cidAll))
	for i := index; i < len(mqAll); i += len(cidAll) {
		out = append(out, mqAll[i])
	}
	return out, nil
}
