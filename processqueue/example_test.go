package processqueue_test

import (
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

func pulled(offs ...int64) []*message.Ext {
	out := make([]*message.Ext, len(offs))
	for i, off := range offs {
		out[i] = &message.Ext{QueueOffset: off, Message: message.Message{Body: []byte("hello")}}
	}
	return out
}

// The concurrent consumer's cycle: the pull service puts what it pulled and dispatches
// what was added; workers stamp the start of consumption, then remove what they
// consumed and store the offset Remove returns (increase-only).
func Example_concurrently() {
	now := time.Now()
	pq := processqueue.New(now)

	added, _ := pq.Put(pulled(10, 11, 12), 20)
	pq.MarkConsumeStart(added, now)

	fmt.Println(pq.Remove(added[1:2])) // 11 consumed; 10 still in flight
	fmt.Println(pq.Remove(added[0:1])) // 10 consumed; 12 still in flight
	fmt.Println(pq.Remove(added[2:3])) // all consumed
	fmt.Println(pq.Count(), pq.BrokerMaxOffset())
	// Output:
	// 10
	// 12
	// 13
	// 0 20
}

// The orderly consumer's cycle: Put says when to start a consume task; the task holds
// the consume lock, takes messages in offset order and commits them.
func Example_orderly() {
	pq := processqueue.New(time.Now())
	if _, dispatch := pq.Put(pulled(5, 6, 7), -1); dispatch {
		if pq.TryLockConsume() {
			for msgs := pq.Take(2); len(msgs) > 0; msgs = pq.Take(2) {
				off, _ := pq.Commit()
				fmt.Println(len(msgs), "consumed, store offset", off)
			}
			pq.UnlockConsume()
		}
	}
	// Output:
	// 2 consumed, store offset 7
	// 1 consumed, store offset 8
}
