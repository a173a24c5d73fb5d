package protocol

import (
	"fmt"
	"slices"

	"github.com/rmqpush/rmqpush/message"
)

// parseBody parses a body for the named type.
func parseBody(name string, data []byte) (Value, error) {
	v, err := Parse(data)
	if err != nil {
		return Value{}, fmt.Errorf("protocol: %s: %w", name, err)
	}
	if v.kind != KindObject {
		return Value{}, fmt.Errorf("protocol: %s: %w", name, v.wrongKind("object"))
	}
	return v, nil
}

// bodyErr wraps a decode error with the body type's name.
func bodyErr(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("protocol: %s: %w", name, err)
}

// at prefixes err with the path of the value that failed.
func at(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", path, err)
}

// atIndex prefixes err with path[i].
func atIndex(path string, i int, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s[%d]: %w", path, i, err)
}

// decodeQueue reads a message queue: an object {"brokerName","queueId","topic"} (any
// order, unknown fields ignored), or, as a map key written in standard style, a string
// holding that object's JSON.
func decodeQueue(v Value) (message.Queue, error) {
	if v.kind == KindString {
		inner, err := Parse([]byte(v.s))
		if err != nil {
			return message.Queue{}, v.errorf("message queue key " + truncateQuote(v.s) + ": " + err.Error())
		}
		if inner.kind != KindObject {
			return message.Queue{}, v.errorf("message queue key " + truncateQuote(v.s) + " is not a JSON object")
		}
		q, err := decodeQueueObject(inner)
		if err != nil {
			return message.Queue{}, v.errorf("message queue key " + truncateQuote(v.s) + ": " + err.Error())
		}
		return q, nil
	}
	if v.kind != KindObject {
		return message.Queue{}, v.wrongKind("message queue object")
	}
	return decodeQueueObject(v)
}

func decodeQueueObject(v Value) (message.Queue, error) {
	var q message.Queue
	err := v.Fields(func(name string, f Value) error {
		var err error
		switch name {
		case "topic":
			q.Topic, err = f.Str()
		case "brokerName":
			q.BrokerName, err = f.Str()
		case "queueId":
			q.QueueID, err = f.Int32()
		}
		return at(name, err)
	})
	return q, err
}

func truncateQuote(s string) string {
	const limit = 80
	if len(s) > limit {
		return fmt.Sprintf("%q...", s[:limit])
	}
	return fmt.Sprintf("%q", s)
}

// arrayOf reads an array with fn for each element: null reads as nil, [] as an empty
// slice, and an element's error is reported with its index.
func arrayOf[T any](v Value, fn func(e Value) (T, error)) ([]T, error) {
	if v.IsNull() {
		return nil, nil
	}
	elems, err := v.Elems()
	if err != nil {
		return nil, err
	}
	out := make([]T, len(elems))
	for i, e := range elems {
		if out[i], err = fn(e); err != nil {
			return nil, atIndex("", i, err)
		}
	}
	return out, nil
}

// decodeQueues reads an array of message queues.
func decodeQueues(v Value) ([]message.Queue, error) { return arrayOf(v, decodeQueue) }

// decodeStrings reads an array of strings.
func decodeStrings(v Value) ([]string, error) { return arrayOf(v, Value.Str) }

// decodeInt32s reads an array of integers.
func decodeInt32s(v Value) ([]int32, error) { return arrayOf(v, Value.Int32) }

// decodeStringMap reads an object of strings.
func decodeStringMap(v Value) (map[string]string, error) {
	m := make(map[string]string, v.Len())
	err := v.Fields(func(name string, f Value) error {
		s, err := f.Str()
		if err != nil {
			return at(name, err)
		}
		m[name] = s
		return nil
	})
	return m, err
}

// decodeQueueOffsets reads a map from message queue (object or string key) to offset.
func decodeQueueOffsets(v Value) (map[message.Queue]int64, error) {
	m := make(map[message.Queue]int64, v.Len())
	err := v.Members(func(k, f Value) error {
		q, err := decodeQueue(k)
		if err != nil {
			return err
		}
		n, err := f.Int64()
		if err != nil {
			return at(q.String(), err)
		}
		m[q] = n
		return nil
	})
	return m, err
}

// writeQueues writes an array of message queues.
func writeQueues(w *Writer, qs []message.Queue) {
	w.BeginArray()
	for _, q := range qs {
		w.Queue(q)
	}
	w.EndArray()
}

// writeStrings writes an array of strings.
func writeStrings(w *Writer, ss []string) {
	w.BeginArray()
	for _, s := range ss {
		w.Str(s)
	}
	w.EndArray()
}

// sortedQueues returns the keys of m in Java's MessageQueue order (a TreeMap's order).
func sortedQueues[V any](m map[message.Queue]V) []message.Queue {
	qs := make([]message.Queue, 0, len(m))
	for q := range m {
		qs = append(qs, q)
	}
	slices.SortFunc(qs, message.Queue.Compare)
	return qs
}

// writeQueueOffsets writes a map from message queue to offset, in queue order.
func writeQueueOffsets(w *Writer, m map[message.Queue]int64) {
	w.BeginObject()
	for _, q := range sortedQueues(m) {
		w.QueueKey(q)
		w.Int(m[q])
	}
	w.EndObject()
}
