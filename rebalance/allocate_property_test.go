package rebalance

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/rmqpush/rmqpush/message"
)

var rooms = []string{"bj", "hz", "sh", "gz"}

// genQueues draws a sorted list of distinct queues over a few topics and brokers named
// "<room>@broker-<n>" (sometimes a name without a room).
func genQueues(t *rapid.T) []message.Queue {
	set := map[message.Queue]bool{}
	n := rapid.IntRange(1, 120).Draw(t, "queues")
	for range n {
		broker := fmt.Sprintf("%s@broker-%d", rapid.SampledFrom(rooms).Draw(t, "room"), rapid.IntRange(0, 3).Draw(t, "broker"))
		if rapid.IntRange(0, 19).Draw(t, "roomless") == 0 {
			broker = fmt.Sprintf("plain-%d", rapid.IntRange(0, 1).Draw(t, "plain"))
		}
		set[message.Queue{
			Topic:      rapid.SampledFrom([]string{"T", "U"}).Draw(t, "topic"),
			BrokerName: broker,
			QueueID:    int32(rapid.IntRange(0, 15).Draw(t, "id")),
		}] = true
	}
	out := make([]message.Queue, 0, len(set))
	for q := range set {
		out = append(out, q)
	}
	slices.SortFunc(out, message.Queue.Compare)
	return out
}

// genCIDs draws a sorted list of distinct client ids "<room>@10.0.0.<n>@<pid>".
func genCIDs(t *rapid.T) []string {
	set := map[string]bool{}
	n := rapid.IntRange(1, 30).Draw(t, "consumers")
	for range n {
		set[fmt.Sprintf("%s@10.0.0.%d@%d", rapid.SampledFrom(rooms).Draw(t, "croom"),
			rapid.IntRange(1, 40).Draw(t, "ip"), rapid.IntRange(1, 3).Draw(t, "pid"))] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// TestPropertyPartition checks that, for every strategy but ByConfig, the shares of all
// clients together are exactly the allocatable queues, with no queue twice.
func TestPropertyPartition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mq := genQueues(t)
		cidAll := genCIDs(t)
		vnodes := rapid.IntRange(1, 20).Draw(t, "vnodes")
		ch, err := NewConsistentHash(vnodes)
		if err != nil {
			t.Fatal(err)
		}
		idcs := rapid.SliceOfDistinct(rapid.SampledFrom(rooms), func(s string) string { return s }).Draw(t, "idcs")
		brokerRoom := func(q message.Queue) string {
			if r, ok := machineRoomOf(q.BrokerName); ok {
				return r
			}
			return "none"
		}
		nearbyAvg, err := NewMachineRoomNearby(Averagely{}, brokerRoom, roomOf)
		if err != nil {
			t.Fatal(err)
		}
		nearbyHash, err := NewMachineRoomNearby(ch, brokerRoom, roomOf)
		if err != nil {
			t.Fatal(err)
		}

		// ByMachineRoom allocates only the queues of brokers in its IDCs.
		var inIDCs []message.Queue
		for _, q := range mq {
			if r, ok := machineRoomOf(q.BrokerName); ok && slices.Contains(idcs, r) {
				inIDCs = append(inIDCs, q)
			}
		}

		for _, tc := range []struct {
			s    AllocateStrategy
			want []message.Queue
		}{
			{Averagely{}, mq},
			{AveragelyByCircle{}, mq},
			{NewByMachineRoom(idcs...), inIDCs},
			{nearbyAvg, mq},
			{nearbyHash, mq},
			{ch, mq},
		} {
			owner := map[message.Queue]string{}
			sizes := make([]int, 0, len(cidAll))
			for _, c := range cidAll {
				got, err := tc.s.Allocate("G", c, mq, cidAll)
				if err != nil {
					t.Fatalf("%s: %s: %v", tc.s.Name(), c, err)
				}
				for _, q := range got {
					if prev, dup := owner[q]; dup {
						t.Fatalf("%s: queue %s allocated to %s and %s", tc.s.Name(), q, prev, c)
					}
					owner[q] = c
				}
				sizes = append(sizes, len(got))
			}
			if len(owner) != len(tc.want) {
				t.Fatalf("%s: %d queues allocated, want %d", tc.s.Name(), len(owner), len(tc.want))
			}
			for _, q := range tc.want {
				if _, ok := owner[q]; !ok {
					t.Fatalf("%s: queue %s allocated to no one", tc.s.Name(), q)
				}
			}
			// The even strategies differ by at most one queue between clients.
			switch tc.s.(type) {
			case Averagely, AveragelyByCircle, *ByMachineRoom:
				if slices.Max(sizes)-slices.Min(sizes) > 1 {
					t.Fatalf("%s: uneven shares %v", tc.s.Name(), sizes)
				}
			}
		}
	})
}
