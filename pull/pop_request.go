package pull

import (
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

// PopRequest is one queue's pop request (Java's PopRequest): a queue the broker assigned
// in POP mode, where QueueID -1 means any queue of the topic on that broker. Exactly one
// exists per assigned POP queue. Create one with NewPopRequest when the queue is
// assigned, and Submit it to the PopService.
type PopRequest struct {
	Queue    message.Queue          // the queue popped, on the wire (QueueID may be -1)
	PQ       *processqueue.PopQueue // its popped messages
	InitMode int32                  // where a group that never consumed the queue starts (protocol.InitModeMin / InitModeMax)
	// InFlight is how many pops of the queue the service keeps in flight at once, each
	// sent again as soon as it is answered (Java: one). A broker pops the queues of a
	// topic one pop at a time each, so pops of a whole broker (queue id -1) in parallel
	// read different queues.
	InFlight int
}

// NewPopRequest returns the pop request of a newly assigned POP queue, with inFlight
// pops in flight (at least one).
func NewPopRequest(q message.Queue, pq *processqueue.PopQueue, initMode int32, inFlight int) *PopRequest {
	return &PopRequest{Queue: q, PQ: pq, InitMode: initMode, InFlight: max(inFlight, 1)}
}

// popPipe is one of a PopRequest's pops in flight: it moves between the PopService's
// queue, the broker and the delay heap, and is sent again as soon as it is answered.
type popPipe struct {
	r        *PopRequest
	sent     time.Time                      // when its pop in flight was sent
	addr     string                         // the broker address it was sent to
	onAnswer func(*client.PopResult, error) // made once: no closure per pop
	early    int                            // NOT_FOUND answers in a row that came long before the poll time
}
