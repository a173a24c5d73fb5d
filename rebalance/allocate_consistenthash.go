package rebalance

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/rmqpush/rmqpush/message"
)

// DefaultVirtualNodes is Java's default number of virtual nodes per client on the
// consistent-hash ring.
const DefaultVirtualNodes = 10

// ConsistentHash is Java's AllocateMessageQueueConsistentHash ("CONSISTENT_HASH") with
// its default MD5 hash, reproduced exactly so that Java and rmqpush clients of one
// group build the same ring:
//
//   - every client id c gets virtual nodes keyed "c-0", "c-1", ... (Java VirtualNode:
//     physical key, "-", replica index);
//   - a key hashes to the first 4 bytes of the MD5 digest of its UTF-8 bytes, read
//     big-endian as an unsigned 32-bit number (Java MD5Hash: for i in 0..3,
//     h = h<<8 | digest[i]&0xFF, in a long);
//   - nodes are put on the ring in client-id order, a later node replacing an earlier
//     one on the same hash (Java TreeMap.put); a client id listed twice gets its second
//     set of virtual nodes numbered after the ones it already has on the ring;
//   - a queue is routed by the hash of Java's MessageQueue.toString,
//     "MessageQueue [topic=T, brokerName=B, queueId=N]", to the first node whose hash is
//     greater than or equal to it, wrapping around to the smallest (Java tailMap,
//     firstKey).
//
// rocketmq-client-go uses a different ring (CRC32 keys), so in a group mixing it with
// Java clients some queues are consumed twice and others by no one; this one agrees
// with Java.
//
// The zero value uses DefaultVirtualNodes.
type ConsistentHash struct {
	virtualNodes int
}

// NewConsistentHash returns a ConsistentHash with virtualNodes virtual nodes per client.
// It must be at least 1 (Java accepts 0, which assigns no queue to anyone).
func NewConsistentHash(virtualNodes int) (*ConsistentHash, error) {
	if virtualNodes < 1 {
		return nil, fmt.Errorf("rebalance: consistent hash: %d virtual nodes per consumer, want at least 1", virtualNodes)
	}
	return &ConsistentHash{virtualNodes: virtualNodes}, nil
}

// Name returns "CONSISTENT_HASH".
func (*ConsistentHash) Name() string { return NameConsistentHash }

// VirtualNodes returns the number of virtual nodes per client.
func (h *ConsistentHash) VirtualNodes() int {
	if h == nil || h.virtualNodes == 0 {
		return DefaultVirtualNodes
	}
	return h.virtualNodes
}

// Allocate returns the queues of mqAll that the ring routes to currentCID, in mqAll's
// order.
func (h *ConsistentHash) Allocate(group, currentCID string, mqAll []message.Queue, cidAll []string) ([]message.Queue, error) {
	if _, err := check(NameConsistentHash, group, currentCID, mqAll, cidAll); err != nil {
		return []message.Queue{}, err
	}
	ring := buildRing(cidAll, h.VirtualNodes())
	out := []message.Queue{}
	var buf []byte
	for _, q := range mqAll {
		buf = appendQueueKey(buf[:0], q)
		if cidAll[ring.route(javaMD5Hash(buf))] == currentCID {
			out = append(out, q)
		}
	}
	return out, nil
}

// ringNode is one virtual node: its hash and the index in cidAll of its client (the
// first index, for a client id listed twice).
type ringNode struct {
	hash  uint32
	owner int
}

// hashRing is a consistent-hash ring sorted by hash, with unique hashes.
type hashRing []ringNode

// buildRing puts virtualNodes virtual nodes per client on the ring, in cidAll's order,
// with Java's replace-on-collision and replica-numbering rules.
func buildRing(cidAll []string, virtualNodes int) hashRing {
	first := make(map[string]int, len(cidAll)) // client id -> first index in cidAll
	owner := make(map[uint32]int, len(cidAll)*virtualNodes)
	onRing := make([]int, len(cidAll)) // virtual nodes on the ring, by first index
	var buf []byte
	for i, cid := range cidAll {
		id, seen := first[cid]
		if !seen {
			first[cid], id = i, i
		}
		existing := onRing[id] // Java getExistingReplicas, counted before adding
		for r := range virtualNodes {
			buf = strconv.AppendInt(append(append(buf[:0], cid...), '-'), int64(r+existing), 10)
			h := javaMD5Hash(buf)
			if prev, taken := owner[h]; taken {
				onRing[prev]--
			}
			owner[h] = id
			onRing[id]++
		}
	}
	ring := make(hashRing, 0, len(owner))
	for h, id := range owner {
		ring = append(ring, ringNode{hash: h, owner: id})
	}
	slices.SortFunc(ring, func(a, b ringNode) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		return 0
	})
	return ring
}

// route returns the owner of the first node with a hash at or after h, wrapping
// around. The ring must not be empty.
func (r hashRing) route(h uint32) int {
	i, _ := slices.BinarySearchFunc(r, h, func(n ringNode, h uint32) int {
		switch {
		case n.hash < h:
			return -1
		case n.hash > h:
			return 1
		}
		return 0
	})
	if i == len(r) {
		i = 0
	}
	return r[i].owner
}

// javaMD5Hash is Java's ConsistentHashRouter.MD5Hash: the first four bytes of the MD5
// digest, big-endian, unsigned.
func javaMD5Hash(key []byte) uint32 {
	sum := md5.Sum(key)
	return binary.BigEndian.Uint32(sum[:4])
}

// appendQueueKey appends Java's MessageQueue.toString of q.
func appendQueueKey(buf []byte, q message.Queue) []byte {
	buf = append(buf, "MessageQueue [topic="...)
	buf = append(buf, q.Topic...)
	buf = append(buf, ", brokerName="...)
	buf = append(buf, q.BrokerName...)
	buf = append(buf, ", queueId="...)
	buf = strconv.AppendInt(buf, int64(q.QueueID), 10)
	return append(buf, ']')
}
