package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// Limits of the control endpoint's input.
const (
	maxControlBody   = 64 << 20 // bytes of a request body
	maxProduceBodies = 1 << 20  // messages of one /produce
	defaultMsgLimit  = 10000    // messages /messages returns without a limit
	maxMsgLimit      = 1 << 20
)

// CheckAddr refuses an address to serve the endpoint on that is not a loopback IP: the
// endpoint has no authentication.
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("control address %q: %w", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("control address %q: the host must be a loopback IP (the endpoint has no authentication)", addr)
	}
	return nil
}

// control serves the control endpoint of one cluster.
type control struct{ c *fakebroker.Cluster }

// NewHandler returns the control endpoint's handler for c.
func NewHandler(c *fakebroker.Cluster) http.Handler {
	ctl := control{c: c}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /brokers", ctl.brokers)
	mux.HandleFunc("POST /brokers/{name}/faults", ctl.inject)
	mux.HandleFunc("POST /brokers/{name}/lag", ctl.lag)
	mux.HandleFunc("GET /requests", ctl.requests)
	mux.HandleFunc("GET /regressions", ctl.regressions)
	mux.HandleFunc("POST /brokers/{name}/{action}", ctl.action)
	mux.HandleFunc("POST /namesrv/{action}", ctl.nameServerAction)
	mux.HandleFunc("POST /produce", ctl.produce)
	mux.HandleFunc("GET /offsets", ctl.offsets)
	mux.HandleFunc("GET /messages", ctl.messages)
	mux.HandleFunc("GET /clients", ctl.clients)
	mux.HandleFunc("POST /consume-mode", ctl.consumeMode)
	return mux
}

func (ctl control) brokers(w http.ResponseWriter, _ *http.Request) {
	var out []BrokerInfo
	for _, b := range ctl.c.Brokers() {
		out = append(out, BrokerInfo{Name: b.Name(), Addr: b.Addr(), Running: b.Running()})
	}
	writeJSON(w, http.StatusOK, out)
}

func (ctl control) broker(w http.ResponseWriter, r *http.Request) (*fakebroker.Broker, bool) {
	name := r.PathValue("name")
	b := ctl.c.Broker(name)
	if b == nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("no broker named %q", name))
		return nil, false
	}
	return b, true
}

func (ctl control) action(w http.ResponseWriter, r *http.Request) {
	b, ok := ctl.broker(w, r)
	if !ok {
		return
	}
	switch action := r.PathValue("action"); action {
	case "stop":
		b.Stop()
	case "start":
		if err := b.Start(); err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
	case "kill":
		b.Kill()
	case "pause":
		b.Pause()
	case "resume":
		b.Resume()
	case "close-connections":
		b.CloseConnections()
	case "clear-faults":
		b.ClearFaults()
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("unknown action %q (stop, start, kill, pause, resume, close-connections, clear-faults)", action))
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func (ctl control) nameServerAction(w http.ResponseWriter, r *http.Request) {
	ns := ctl.c.NameServer()
	switch action := r.PathValue("action"); action {
	case "stop":
		ns.Stop()
	case "start":
		if err := ns.Start(); err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
	case "kill":
		ns.Kill()
	case "pause":
		ns.Pause()
	case "resume":
		ns.Resume()
	case "close-connections":
		ns.CloseConnections()
	case "clear-faults":
		ns.ClearFaults()
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("unknown action %q (stop, start, kill, pause, resume, close-connections, clear-faults)", action))
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func (ctl control) inject(w http.ResponseWriter, r *http.Request) {
	b, ok := ctl.broker(w, r)
	if !ok {
		return
	}
	var spec FaultSpec
	if !readJSON(w, r, &spec) {
		return
	}
	f, err := spec.Fault()
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if _, err := b.Inject(f); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func (ctl control) lag(w http.ResponseWriter, r *http.Request) {
	b, ok := ctl.broker(w, r)
	if !ok {
		return
	}
	var specs []LagSpec
	if !readJSON(w, r, &specs) {
		return
	}
	lags := make([]fakebroker.Lag, 0, len(specs))
	for _, s := range specs {
		l, err := s.Lag()
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		lags = append(lags, l)
	}
	if err := b.SetLag(lags...); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func (ctl control) requests(w http.ResponseWriter, _ *http.Request) {
	out := map[string]map[int32]int{NameServerKey: ctl.c.NameServer().RequestCounts()}
	for _, b := range ctl.c.Brokers() {
		out[b.Name()] = b.RequestCounts()
	}
	writeJSON(w, http.StatusOK, out)
}

func (ctl control) regressions(w http.ResponseWriter, r *http.Request) {
	group := r.URL.Query().Get("group")
	out := map[string]Regressions{}
	for _, b := range ctl.c.Brokers() {
		n, recent := b.OffsetRegressions(group)
		out[b.Name()] = Regressions{Count: n, Recent: recent}
	}
	writeJSON(w, http.StatusOK, out)
}

func (ctl control) produce(w http.ResponseWriter, r *http.Request) {
	var req ProduceRequest
	if !readJSON(w, r, &req) {
		return
	}
	if len(req.Bodies) > maxProduceBodies {
		writeError(w, http.StatusBadRequest, fmt.Errorf("%d messages in one request; at most %d", len(req.Bodies), maxProduceBodies))
		return
	}
	msgs := make([]*message.Message, len(req.Bodies))
	for i, body := range req.Bodies {
		msgs[i] = &message.Message{Topic: req.Topic, Body: []byte(body)}
		if req.Tags != "" {
			msgs[i].Properties.Set(message.PropertyTags, req.Tags)
		}
	}
	out, err := ctl.c.Produce(req.Topic, msgs...)
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("produced %d of %d: %w", len(out), len(msgs), err))
		return
	}
	writeJSON(w, http.StatusOK, produceResult{Count: len(out)})
}

func (ctl control) offsets(w http.ResponseWriter, r *http.Request) {
	group, topic := r.URL.Query().Get("group"), r.URL.Query().Get("topic")
	if group == "" || topic == "" {
		writeError(w, http.StatusBadRequest, errors.New("offsets: group and topic are required"))
		return
	}
	out := []QueueOffsets{}
	for _, b := range ctl.c.Brokers() {
		info, ok := b.Topic(topic)
		if !ok {
			continue
		}
		for q := range info.ReadQueues {
			qo := QueueOffsets{Broker: b.Name(), QueueID: int32(q), Min: b.MinOffset(topic, q), Max: b.MaxOffset(topic, q), Committed: -1}
			if off, ok := b.CommittedOffset(group, topic, q); ok {
				qo.Committed = off
			}
			out = append(out, qo)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (ctl control) messages(w http.ResponseWriter, r *http.Request) {
	topic := r.URL.Query().Get("topic")
	if topic == "" {
		writeError(w, http.StatusBadRequest, errors.New("messages: topic is required"))
		return
	}
	limit := defaultMsgLimit
	if s := r.URL.Query().Get("limit"); s != "" {
		if _, err := fmt.Sscanf(s, "%d", &limit); err != nil || limit < 1 || limit > maxMsgLimit {
			writeError(w, http.StatusBadRequest, fmt.Errorf("messages: limit %q is not in [1, %d]", s, maxMsgLimit))
			return
		}
	}
	out := []StoredMessage{}
	for _, b := range ctl.c.Brokers() {
		for _, m := range b.TopicMessages(topic) {
			if len(out) == limit {
				break
			}
			out = append(out, StoredMessage{
				Broker: b.Name(), QueueID: m.QueueID, QueueOffset: m.QueueOffset, Body: string(m.Body),
				ReconsumeTimes: m.ReconsumeTimes, BornTimestamp: m.BornTimestamp, StoreTimestamp: m.StoreTimestamp,
				Properties: m.Properties.Map(),
			})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (ctl control) clients(w http.ResponseWriter, r *http.Request) {
	group := r.URL.Query().Get("group")
	if group == "" {
		writeError(w, http.StatusBadRequest, errors.New("clients: group is required"))
		return
	}
	out := map[string][]string{}
	for _, b := range ctl.c.Brokers() {
		out[b.Name()] = append([]string{}, b.Clients(group)...)
	}
	writeJSON(w, http.StatusOK, out)
}

// consumeMode is mqadmin setConsumeMode: Cluster.SetConsumeMode.
func (ctl control) consumeMode(w http.ResponseWriter, r *http.Request) {
	var req ConsumeModeRequest
	if !readJSON(w, r, &req) {
		return
	}
	if err := ctl.c.SetConsumeMode(req.Group, req.Topic, req.Mode, req.PopShareQueueNum); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxControlBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("%s %s: bad JSON body: %w", r.Method, r.URL.Path, err))
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": strings.TrimSpace(err.Error())})
}
