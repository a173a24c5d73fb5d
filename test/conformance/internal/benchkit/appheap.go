package benchkit

// appObject is one object of the application heap a worker can hold (see AppHeap): 64
// bytes with two pointers, as a service's structs and strings are, so the collector
// marks it on every cycle.
type appObject struct {
	name    string
	next    *appObject
	payload [40]byte
}

// AppHeap is live memory standing in for the service a client runs in: a benchmark
// worker's own heap is under a megabyte, so Go collects at its 4 MB minimum goal, far
// more often than in a service whose live heap is tens of megabytes. Holding an
// AppHeap for the run paces the collector as such a service's heap would, for every
// client alike.
type AppHeap struct {
	objects []*appObject
}

// NewAppHeap allocates about mib MiB of live objects that point to each other.
func NewAppHeap(mib int) *AppHeap {
	n := mib << 20 / (64 + 8) // each object and its slot in objects
	h := &AppHeap{objects: make([]*appObject, n)}
	const name = "service-object"
	for i := range h.objects {
		o := &appObject{name: name}
		if i > 0 {
			o.next = h.objects[i-1]
		}
		h.objects[i] = o
	}
	return h
}

// Len returns the number of objects held.
func (h *AppHeap) Len() int {
	if h == nil {
		return 0
	}
	return len(h.objects)
}
