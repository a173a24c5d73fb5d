package pull

import (
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

// PopRequest is one queue's pop request (Java's PopRequest): a queue the broker assigned
// in POP mode, where QueueID -1 means any queue of the topic on that broker. Exactly one
// exists per assigned POP queue; it moves between the PopService's queue, the broker
// and the delay heap. Create one with NewPopRequest when the queue is assigned.
type PopRequest struct {
	Queue    message.Queue          // the queue popped, on the wire (QueueID may be -1)
	PQ       *processqueue.PopQueue // its popped messages
	InitMode int32                  // where a group that never consumed the queue starts (protocol.InitModeMin / InitModeMax)

	sent     time.Time                      // when the pop in flight was sent
	onAnswer func(*client.PopResult, error) // made once: no closure per pop
}

// NewPopRequest returns the pop request of a newly assigned POP queue.
func NewPopRequest(q message.Queue, pq *processqueue.PopQueue, initMode int32) *PopRequest {
	return &PopRequest{Queue: q, PQ: pq, InitMode: initMode}
}
