package fakebroker

import (
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// Broker is one fake broker (a master): its store, topics, consumer offsets, consumer and
// producer groups, queue locks, held long polls and delayed messages, served on its own
// loopback port. Its methods are safe for concurrent use.
//
// All broker state is guarded by one mutex. Handlers run on the connection read loops
// of the transport and never block: a held long poll is answered later from the
// Cluster's scheduler goroutine, or from the goroutine that stored the message it waited
// for. Calls to clients that wait for an answer (running info, consume directly,
// consumer status) run on the caller's goroutine.
type Broker struct {
	c    *Cluster
	cfg  *config
	name string
	idx  int
	ep   *endpoint

	mu          sync.Mutex
	registered  bool   // listed in routes: from Start to Stop (a killed broker stays listed)
	stopping    bool   // Stop or Kill is closing the connections
	runGen      uint64 // changed by Start and Stop: timers armed before are stale
	storeHost   netip.AddrPort
	log         commitLog
	topics      map[string]*topicConfig
	offsets     map[offsetKey]int64
	groups      map[string]*consumerGroup
	producers   map[string]map[conn]*member
	lastHB      map[string]ConsumerInfo
	filters     map[string]map[string]*filterData // topic → group (filterdata.go)
	filterCount int
	locks       map[string]map[message.Queue]*lockEntry
	lockCount   int
	held        map[*heldPull]struct{}
	holdTask    *task
	expiryTask  *task
	delay       []*delayLevel
	memberSeq   uint64
	uniqSeq     uint32
	pop         popState // POP consumption (pop.go), with WithRocketMQ5

	regressionTotal int                // consumer-offset writes that moved an offset back
	regressionCount map[string]int     // the same, by group
	regressions     []OffsetRegression // the most recent, oldest first
}

// offsetKey identifies a committed consumer offset.
type offsetKey struct {
	group, topic string
	queue        int32
}

func newBroker(c *Cluster, idx int, name string, addr string) *Broker {
	b := &Broker{
		c:         c,
		cfg:       &c.cfg,
		name:      name,
		idx:       idx,
		topics:    make(map[string]*topicConfig),
		offsets:   make(map[offsetKey]int64),
		groups:    make(map[string]*consumerGroup),
		producers: make(map[string]map[conn]*member),
		lastHB:    make(map[string]ConsumerInfo),
		filters:   make(map[string]map[string]*filterData),
		locks:     make(map[string]map[message.Queue]*lockEntry),
		held:      make(map[*heldPull]struct{}),
		pop:       newPopState(),
	}
	b.delay = make([]*delayLevel, len(c.cfg.delayLevels))
	for i, d := range c.cfg.delayLevels {
		b.delay[i] = &delayLevel{
			level: i + 1,
			d:     d,
			q:     &consumeQueue{topic: scheduleTopic, id: int32(i)},
		}
	}
	if c.cfg.autoCreate {
		b.topics[autoCreateTopic] = newTopicConfig(autoCreateTopic, DefaultTopicQueueNums, DefaultTopicQueueNums, permRW|permInherit, 0)
	}
	b.ep = newEndpoint("broker "+name, addr, c.sched)
	if len(c.cfg.lags) > 0 {
		b.ep.lags = c.cfg.lags
	}
	b.ep.onClosed = b.connClosed
	b.register()
	return b
}

// register installs the handler of every supported request code.
func (b *Broker) register() {
	for code, h := range map[int32]handler{
		protocol.RequestSendMessage:               b.sendMessage,
		protocol.RequestSendMessageV2:             b.sendMessage,
		protocol.RequestSendBatchMessage:          b.sendBatchMessage,
		protocol.RequestPullMessage:               b.pullMessage,
		protocol.RequestQueryConsumerOffset:       b.queryConsumerOffset,
		protocol.RequestUpdateConsumerOffset:      b.updateConsumerOffset,
		protocol.RequestUpdateAndCreateTopic:      b.updateAndCreateTopic,
		protocol.RequestSearchOffsetByTimestamp:   b.searchOffsetByTimestamp,
		protocol.RequestGetMaxOffset:              b.getMaxOffset,
		protocol.RequestGetMinOffset:              b.getMinOffset,
		protocol.RequestViewMessageByID:           b.viewMessageByID,
		protocol.RequestHeartBeat:                 b.heartBeat,
		protocol.RequestUnregisterClient:          b.unregisterClient,
		protocol.RequestConsumerSendMsgBack:       b.consumerSendMsgBack,
		protocol.RequestGetConsumerListByGroup:    b.getConsumerListByGroup,
		protocol.RequestLockBatchMQ:               b.lockBatchMQ,
		protocol.RequestUnlockBatchMQ:             b.unlockBatchMQ,
		protocol.RequestCheckClientConfig:         b.checkClientConfig,
		protocol.RequestInvokeBrokerToResetOffset: b.invokeBrokerToResetOffset,
	} {
		b.ep.handle(code, h)
	}
	if b.cfg.rocketMQ5 {
		for code, h := range map[int32]handler{
			protocol.RequestQueryAssignment:            b.queryAssignment,
			protocol.RequestSetMessageRequestMode:      b.setMessageRequestMode,
			protocol.RequestPopMessage:                 b.popMessage,
			protocol.RequestAckMessage:                 b.ackMessage,
			protocol.RequestBatchAckMessage:            b.batchAckMessage,
			protocol.RequestChangeMessageInvisibleTime: b.changeInvisibleTime,
		} {
			b.ep.handle(code, h)
		}
	}
}

// Name returns the broker's name, e.g. "broker-a".
func (b *Broker) Name() string { return b.name }

// Addr returns the broker's address, "host:port". It stays the same across Stop and
// Start.
func (b *Broker) Addr() string { return b.ep.address() }

// Running reports whether the broker is serving (started and neither stopped nor killed).
func (b *Broker) Running() bool { return b.ep.isRunning() }

// Start starts a stopped or killed broker again on the same address, with everything it
// stored: messages, topics, consumer offsets, pending delayed messages. Consumer and
// producer groups, queue locks and held long polls were lost with the connections, as
// in a real restart; clients find the broker again by heartbeating.
func (b *Broker) Start() error {
	if b.c.isClosed() {
		return fmt.Errorf("fakebroker: broker %s: the cluster is closed", b.name)
	}
	// A new run: timers armed from now on, by the first requests too, belong to it.
	b.mu.Lock()
	b.runGen++
	b.mu.Unlock()
	err := b.ep.start(func(addr string) {
		// The store host is the address, known once listening, before any request.
		b.mu.Lock()
		defer b.mu.Unlock()
		if ap, err := netip.ParseAddrPort(addr); err == nil {
			b.storeHost = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
	})
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.registered = true
	b.stopping = false
	b.armExpiryScan()
	for _, dl := range b.delay {
		b.armDelay(dl)
	}
	b.armReviveAll()
	return nil
}

// Stop shuts the broker down as a real broker shuts down: it leaves the name server's
// routes at once, and its connections close. Data stays for Start.
func (b *Broker) Stop() {
	b.shutdown(false)
}

// Kill stops the broker abruptly: every connection is reset (no FIN, nothing flushed),
// and the name server keeps routing clients to it, as it would until it noticed the
// crash, so clients meet connection errors. Data stays for Start.
func (b *Broker) Kill() {
	b.shutdown(true)
}

func (b *Broker) shutdown(kill bool) {
	b.mu.Lock()
	b.stopping = true
	if !kill {
		b.registered = false
	}
	b.mu.Unlock()
	b.ep.stop(kill)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runGen++
	b.stopping = false
	b.groups = make(map[string]*consumerGroup)
	b.producers = make(map[string]map[conn]*member)
	b.locks = make(map[string]map[message.Queue]*lockEntry)
	b.lockCount = 0
	for hp := range b.held {
		b.c.sched.cancel(hp.task)
		hp.cq.held = nil
	}
	b.held = make(map[*heldPull]struct{})
	b.c.sched.cancel(b.holdTask)
	b.holdTask = nil
	b.c.sched.cancel(b.expiryTask)
	b.expiryTask = nil
	for _, dl := range b.delay {
		b.c.sched.cancel(dl.task)
		dl.task = nil
	}
	b.dropPops(nil)
	b.c.sched.cancel(b.pop.reviveTask)
	b.pop.reviveTask = nil
}

// isRegistered reports whether routes list the broker.
func (b *Broker) isRegistered() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.registered
}

// connClosed forgets a closed connection: its consumer and producer registrations (the
// groups it left are notified, as ConsumerManager.doChannelCloseEvent does) and its held
// long polls.
func (b *Broker) connClosed(sc conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopping {
		return
	}
	for hp := range b.held {
		if hp.sc == sc {
			b.dropHeld(hp)
		}
	}
	b.dropPops(sc)
	for name, g := range b.groups {
		if !g.remove(sc) {
			continue
		}
		if len(g.members) == 0 {
			delete(b.groups, name)
		}
		b.notifyChanged(g)
	}
	for name, ps := range b.producers {
		delete(ps, sc)
		if len(ps) == 0 {
			delete(b.producers, name)
		}
	}
}

// newResponse returns a response to req as a 4.9.8 broker writes it: language JAVA,
// version V4_9_8, in req's serialization.
func newResponse(req *remoting.Command, code int32, remark string) *remoting.Command {
	return &remoting.Command{
		Code:      code,
		Language:  remoting.LanguageJava,
		Version:   remoting.Version,
		Opaque:    req.Opaque,
		Flag:      remoting.FlagResponse,
		Remark:    remark,
		Serialize: req.Serialize,
	}
}

// newRequest returns a request the broker starts, as 4.9.8 writes them: JSON, JAVA.
func newRequest(code int32, fields remoting.Fields, body []byte) *remoting.Command {
	return &remoting.Command{
		Code:      code,
		Language:  remoting.LanguageJava,
		Version:   remoting.Version,
		ExtFields: fields,
		Body:      body,
		Serialize: remoting.SerializeJSON,
	}
}

// reply returns resp for the transport to send, or sends it itself when it must go out
// in another serialization than the request's (the transport would impose the request's).
func reply(sc conn, req, resp *remoting.Command) *remoting.Command {
	if resp == nil || resp.Serialize == req.Serialize {
		return resp
	}
	if !req.IsOneway() {
		_ = sc.Respond(resp) // a closed connection has nobody left to answer
	}
	return nil
}

// badRequest answers a request whose header or body cannot be read. 4.9.8 logs a bad
// header field, leaves it null and then fails (usually with a NullPointerException); its
// catch-all answers SYSTEM_ERROR with the exception's text, in JSON whatever the
// request's serialization. We answer the same code and serialization with a remark that
// names the field.
func badRequest(sc conn, req *remoting.Command, err error) *remoting.Command {
	resp := newResponse(req, protocol.ResponseSystemError, exceptionRemark(err))
	resp.Serialize = remoting.SerializeJSON
	return reply(sc, req, resp)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func boolString(v bool) string {
	if v {
		return "true"
	}
	return "false"
}

func nowMillis() int64 { return time.Now().UnixMilli() }
