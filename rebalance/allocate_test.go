package rebalance

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

// queues returns queue ids 0..n-1 of topic T on one broker, sorted.
func queues(broker string, n int) []message.Queue {
	out := make([]message.Queue, n)
	for i := range out {
		out[i] = message.Queue{Topic: "T", BrokerName: broker, QueueID: int32(i)}
	}
	return out
}

// cids returns n sorted client ids.
func cids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("10.0.0.%03d@1234", i)
	}
	return out
}

// ids returns the queue ids of qs.
func ids(qs []message.Queue) []int32 {
	out := make([]int32, 0, len(qs))
	for _, q := range qs {
		out = append(out, q.QueueID)
	}
	return out
}

// names returns "broker:id" for each of qs.
func names(qs []message.Queue) []string {
	out := make([]string, 0, len(qs))
	for _, q := range qs {
		out = append(out, fmt.Sprintf("%s:%d", q.BrokerName, q.QueueID))
	}
	return out
}

// roomOf is the test machine-room resolver for broker names and client ids alike: the
// part before the first '@' ("hz@broker-a", "hz@10.0.0.1").
func roomOf(name string) string {
	room, _, _ := strings.Cut(name, "@")
	return room
}

func mustNearby(t testing.TB, inner AllocateStrategy) *MachineRoomNearby {
	n, err := NewMachineRoomNearby(inner, func(q message.Queue) string { return roomOf(q.BrokerName) }, roomOf)
	require.NoError(t, err)
	return n
}

// allStrategies returns every strategy that partitions the queues among the clients.
func allStrategies(t testing.TB) []AllocateStrategy {
	return []AllocateStrategy{
		Averagely{},
		AveragelyByCircle{},
		NewByMachineRoom("hz", "sh", "bj"),
		mustNearby(t, Averagely{}),
		mustNearby(t, AveragelyByCircle{}),
		&ConsistentHash{},
	}
}

func TestNames(t *testing.T) {
	ch, err := NewConsistentHash(3)
	require.NoError(t, err)
	for _, tc := range []struct {
		s    AllocateStrategy
		want string
	}{
		{Averagely{}, "AVG"},
		{AveragelyByCircle{}, "AVG_BY_CIRCLE"},
		{NewByConfig(nil), "CONFIG"},
		{NewByMachineRoom("hz"), "MACHINE_ROOM"},
		{mustNearby(t, Averagely{}), "MACHINE_ROOM_NEARBY-AVG"},
		{mustNearby(t, &ConsistentHash{}), "MACHINE_ROOM_NEARBY-CONSISTENT_HASH"},
		{ch, "CONSISTENT_HASH"},
	} {
		require.Equal(t, tc.want, tc.s.Name())
	}
}

func TestArgumentChecks(t *testing.T) {
	mq := queues("hz@broker", 4)
	for _, s := range allStrategies(t) {
		t.Run(s.Name(), func(t *testing.T) {
			for _, tc := range []struct {
				name     string
				cid      string
				mqAll    []message.Queue
				cidAll   []string
				notInSet bool
				contains string
			}{
				{"empty current id", "", mq, []string{"hz@a"}, false, "current consumer id is empty"},
				{"no queue", "hz@a", nil, []string{"hz@a"}, false, "no message queue"},
				{"no consumer", "hz@a", mq, nil, false, "consumer id list is empty"},
				{"not in the list", "hz@z", mq, []string{"hz@a", "hz@b"}, true, `consumer "hz@z" is not among the group's 2 consumer ids`},
			} {
				t.Run(tc.name, func(t *testing.T) {
					got, err := s.Allocate("G", tc.cid, tc.mqAll, tc.cidAll)
					require.Error(t, err)
					require.NotNil(t, got)
					require.Empty(t, got)
					require.Equal(t, tc.notInSet, errors.Is(err, ErrConsumerNotInList), "%v", err)
					require.ErrorContains(t, err, tc.contains)
					require.ErrorContains(t, err, `group "G"`)
					require.ErrorContains(t, err, s.Name())
				})
			}
		})
	}
}

func TestAveragely(t *testing.T) {
	for _, tc := range []struct {
		name string
		nq   int
		nc   int
		want [][]int32 // by client index
	}{
		{"8 queues, 3 consumers", 8, 3, [][]int32{{0, 1, 2}, {3, 4, 5}, {6, 7}}},
		{"3 queues, 5 consumers", 3, 5, [][]int32{{0}, {1}, {2}, {}, {}}},
		{"1 consumer", 5, 1, [][]int32{{0, 1, 2, 3, 4}}},
		{"even split", 8, 4, [][]int32{{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
		{"10 queues, 3 consumers", 10, 3, [][]int32{{0, 1, 2, 3}, {4, 5, 6}, {7, 8, 9}}},
		{"as many queues as consumers", 3, 3, [][]int32{{0}, {1}, {2}}},
		{"16 queues, 5 consumers", 16, 5, [][]int32{{0, 1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}, {13, 14, 15}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mq, cs := queues("b", tc.nq), cids(tc.nc)
			for i, c := range cs {
				got, err := Averagely{}.Allocate("G", c, mq, cs)
				require.NoError(t, err)
				require.Equal(t, tc.want[i], ids(got), "client %d", i)
			}
		})
	}
}

func TestAveragelyByCircle(t *testing.T) {
	for _, tc := range []struct {
		name string
		nq   int
		nc   int
		want [][]int32
	}{
		{"8 queues, 3 consumers", 8, 3, [][]int32{{0, 3, 6}, {1, 4, 7}, {2, 5}}},
		{"3 queues, 5 consumers", 3, 5, [][]int32{{0}, {1}, {2}, {}, {}}},
		{"1 consumer", 4, 1, [][]int32{{0, 1, 2, 3}}},
		{"10 queues, 4 consumers", 10, 4, [][]int32{{0, 4, 8}, {1, 5, 9}, {2, 6}, {3, 7}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mq, cs := queues("b", tc.nq), cids(tc.nc)
			for i, c := range cs {
				got, err := AveragelyByCircle{}.Allocate("G", c, mq, cs)
				require.NoError(t, err)
				require.Equal(t, tc.want[i], ids(got), "client %d", i)
			}
		})
	}
}

func TestResultDoesNotAliasInput(t *testing.T) {
	mq, cs := queues("hz@b", 8), []string{"hz@a"}
	for _, s := range allStrategies(t) {
		got, err := s.Allocate("G", "hz@a", mq, cs)
		require.NoError(t, err, s.Name())
		require.Len(t, got, 8, s.Name())
		got[0].QueueID = 99
		require.Equal(t, int32(0), mq[0].QueueID, "%s: result shares memory with mqAll", s.Name())
	}
}

func TestByConfig(t *testing.T) {
	conf := []message.Queue{{Topic: "T", BrokerName: "x", QueueID: 7}, {Topic: "T", BrokerName: "y", QueueID: 1}}
	s := NewByConfig(conf)
	conf[0].QueueID = 100 // NewByConfig copied the list

	for _, tc := range []struct {
		name   string
		cid    string
		mqAll  []message.Queue
		cidAll []string
	}{
		{"ordinary", "a", queues("b", 4), []string{"a", "b"}},
		{"ignores the lists, as Java does", "", nil, nil},
		{"not in the list", "z", queues("b", 4), []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Allocate("G", tc.cid, tc.mqAll, tc.cidAll)
			require.NoError(t, err)
			require.Equal(t, []string{"x:7", "y:1"}, names(got))
			got[0].QueueID = 5 // the result is a copy
		})
	}
	got, err := NewByConfig(nil).Allocate("G", "a", nil, nil)
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, got)
}

func TestResultOrder(t *testing.T) {
	// Every strategy but MachineRoomNearby returns its queues in mqAll's order.
	mq := append(append(queues("hz@a", 7), queues("hz@b", 5)...), queues("sh@c", 6)...)
	cs := []string{"hz@1", "hz@2", "sh@3"}
	for _, s := range allStrategies(t) {
		if strings.HasPrefix(s.Name(), NameMachineRoomNearby) {
			continue
		}
		for _, c := range cs {
			got, err := s.Allocate("G", c, mq, cs)
			require.NoError(t, err)
			require.True(t, slices.IsSortedFunc(got, message.Queue.Compare), "%s %s: %v", s.Name(), c, names(got))
		}
	}
}
