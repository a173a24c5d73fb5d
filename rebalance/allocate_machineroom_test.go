package rebalance

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

func TestMachineRoomOf(t *testing.T) {
	// Java: name.split("@") must give exactly two parts once trailing empty parts are
	// dropped; the IDC is the first.
	for _, tc := range []struct {
		name   string
		wantOK bool
		want   string
	}{
		{"hz@broker-a", true, "hz"},
		{"broker-a", false, ""},
		{"", false, ""},
		{"@", false, ""},
		{"hz@", false, ""},        // ["hz"]
		{"hz@@", false, ""},       // ["hz"]
		{"hz@b@c", false, ""},     // three parts
		{"hz@b@", true, "hz"},     // ["hz", "b"]: Java's split drops the trailing ""
		{"hz@b@@", true, "hz"},    // likewise
		{"@broker", true, ""},     // ["", "broker"]
		{"hz@@b", false, ""},      // ["hz", "", "b"]
		{"中文@broker", true, "中文"}, // non-ASCII
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := machineRoomOf(tc.name)
			require.Equal(t, tc.wantOK, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestByMachineRoom(t *testing.T) {
	// The queues outside the configured IDCs come first in mqAll, so taking mqAll[i]
	// instead of the filtered list's [i] (rocketmq-client-go's bug) shows.
	var mq []message.Queue
	for _, b := range []string{"@x", "bj@b3", "hz@", "hz@b1", "hz@b4@", "plain", "sh@b2"} {
		mq = append(mq, queues(b, 2)...)
	}
	require.True(t, slicesSorted(mq))
	// Qualifying, in mqAll order: hz@b1:0 hz@b1:1 hz@b4@:0 hz@b4@:1 sh@b2:0 sh@b2:1.
	for _, tc := range []struct {
		name string
		idcs []string
		nc   int
		want [][]string
	}{
		{"6 queues, 1 consumer", []string{"hz", "sh"}, 1,
			[][]string{{"hz@b1:0", "hz@b1:1", "hz@b4@:0", "hz@b4@:1", "sh@b2:0", "sh@b2:1"}}},
		{"6 queues, 4 consumers: one each, then the remainder", []string{"hz", "sh"}, 4,
			[][]string{{"hz@b1:0", "sh@b2:0"}, {"hz@b1:1", "sh@b2:1"}, {"hz@b4@:0"}, {"hz@b4@:1"}}},
		{"4 queues, 3 consumers", []string{"hz"}, 3,
			[][]string{{"hz@b1:0", "hz@b4@:1"}, {"hz@b1:1"}, {"hz@b4@:0"}}},
		{"2 queues, 3 consumers", []string{"sh"}, 3,
			[][]string{{"sh@b2:0"}, {"sh@b2:1"}, {}}},
		{"an unknown IDC gets nothing", []string{"gz"}, 2, [][]string{{}, {}}},
		{"the empty IDC", []string{""}, 1, [][]string{{"@x:0", "@x:1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewByMachineRoom(tc.idcs...)
			cs := cids(tc.nc)
			for i, c := range cs {
				got, err := s.Allocate("G", c, mq, cs)
				require.NoError(t, err)
				require.Equal(t, tc.want[i], names(got), "client %d", i)
			}
		})
	}
}

func slicesSorted(mq []message.Queue) bool {
	for i := 1; i < len(mq); i++ {
		if mq[i-1].Compare(mq[i]) >= 0 {
			return false
		}
	}
	return true
}

func TestMachineRoomNearby(t *testing.T) {
	// Rooms: bj has 3 queues and no consumer, hz 4 queues and consumers hz@1, hz@2,
	// sh 2 queues and consumer sh@3.
	mq := append(append(queues("bj@broker", 3), queues("hz@broker", 4)...), queues("sh@broker", 2)...)
	cs := []string{"hz@1", "hz@2", "sh@3"}
	for _, tc := range []struct {
		name  string
		inner AllocateStrategy
		want  map[string][]string
	}{
		{"AVG", Averagely{}, map[string][]string{
			// Own room first (hz among hz@1, hz@2), then bj among everyone.
			"hz@1": {"hz@broker:0", "hz@broker:1", "bj@broker:0"},
			"hz@2": {"hz@broker:2", "hz@broker:3", "bj@broker:1"},
			"sh@3": {"sh@broker:0", "sh@broker:1", "bj@broker:2"},
		}},
		{"AVG_BY_CIRCLE", AveragelyByCircle{}, map[string][]string{
			"hz@1": {"hz@broker:0", "hz@broker:2", "bj@broker:0"},
			"hz@2": {"hz@broker:1", "hz@broker:3", "bj@broker:1"},
			"sh@3": {"sh@broker:0", "sh@broker:1", "bj@broker:2"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustNearby(t, tc.inner)
			for _, c := range cs {
				got, err := s.Allocate("G", c, mq, cs)
				require.NoError(t, err)
				require.Equal(t, tc.want[c], names(got), c)
			}
		})
	}

	t.Run("rooms without consumers in name order", func(t *testing.T) {
		mq := append(append(queues("gz@broker", 2), queues("hz@broker", 2)...), queues("aa@broker", 2)...)
		got, err := mustNearby(t, Averagely{}).Allocate("G", "hz@1", mq, []string{"hz@1"})
		require.NoError(t, err)
		require.Equal(t, []string{"hz@broker:0", "hz@broker:1", "aa@broker:0", "aa@broker:1", "gz@broker:0", "gz@broker:1"}, names(got))
	})

	t.Run("own room without queues", func(t *testing.T) {
		got, err := mustNearby(t, Averagely{}).Allocate("G", "sh@1", queues("hz@broker", 2), []string{"hz@2", "sh@1"})
		require.NoError(t, err)
		require.Empty(t, got, "hz has a consumer, so its queues stay there")
	})
}

func TestMachineRoomNearbyErrors(t *testing.T) {
	noRoom := func(message.Queue) string { return "" }
	_, err := NewMachineRoomNearby(nil, noRoom, roomOf)
	require.ErrorContains(t, err, "wrapped strategy is nil")
	_, err = NewMachineRoomNearby(Averagely{}, nil, roomOf)
	require.ErrorContains(t, err, "broker machine room resolver is nil")
	_, err = NewMachineRoomNearby(Averagely{}, noRoom, nil)
	require.ErrorContains(t, err, "consumer machine room resolver is nil")

	s, err := NewMachineRoomNearby(Averagely{}, noRoom, roomOf)
	require.NoError(t, err)
	_, err = s.Allocate("G", "hz@1", queues("hz@b", 1), []string{"hz@1"})
	require.ErrorContains(t, err, "no machine room for queue T@hz@b:0")

	s, err = NewMachineRoomNearby(Averagely{}, func(q message.Queue) string { return roomOf(q.BrokerName) },
		func(cid string) string {
			if cid == "x" {
				return ""
			}
			return roomOf(cid)
		})
	require.NoError(t, err)
	_, err = s.Allocate("G", "hz@1", queues("hz@b", 1), []string{"hz@1", "x"})
	require.ErrorContains(t, err, `no machine room for consumer "x"`)

	// A failing wrapped strategy fails the whole allocation.
	s = mustNearby(t, failing{})
	_, err = s.Allocate("G", "hz@1", queues("hz@b", 1), []string{"hz@1"})
	require.ErrorIs(t, err, errFailing)
}

var errFailing = errors.New("failing strategy")

type failing struct{}

func (failing) Name() string { return "FAILING" }
func (failing) Allocate(string, string, []message.Queue, []string) ([]message.Queue, error) {
	return nil, errFailing
}
