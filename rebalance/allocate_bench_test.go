package rebalance

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rmqpush/rmqpush/message"
)

// benchInput returns 1,000 queues (10 brokers in 3 rooms, 100 queues each) and 100
// client ids (spread over the same rooms), both sorted.
func benchInput() ([]message.Queue, []string) {
	var mq []message.Queue
	for b := range 10 {
		mq = append(mq, queues(fmt.Sprintf("%s@broker-%d", rooms[b%3], b), 100)...)
	}
	cs := make([]string, 100)
	for i := range cs {
		cs[i] = fmt.Sprintf("%s@10.0.%d.%d@4242", rooms[i%3], i/10, i%10)
	}
	// Sort as the caller does: room names are not in broker order.
	slices.SortFunc(mq, message.Queue.Compare)
	slices.Sort(cs)
	return mq, cs
}

// BenchmarkAllocate measures one client's allocation of 1,000 queues among 100
// clients, for each strategy.
func BenchmarkAllocate(b *testing.B) {
	mq, cs := benchInput()
	nearby, err := NewMachineRoomNearby(Averagely{}, func(q message.Queue) string { return roomOf(q.BrokerName) }, roomOf)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []AllocateStrategy{
		Averagely{},
		AveragelyByCircle{},
		NewByConfig(mq[:10]),
		NewByMachineRoom(rooms...),
		nearby,
		&ConsistentHash{},
	} {
		b.Run(s.Name(), func(b *testing.B) {
			current := cs[len(cs)/2]
			b.ReportAllocs()
			for range b.N {
				if _, err := s.Allocate("G", current, mq, cs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
