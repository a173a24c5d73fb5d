package consumer

import (
	"crypto/tls"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/rebalance"
)

// WithNameServers sets the name server addresses (host:port). A single string may hold
// several separated by ';', as Java's namesrvAddr. Without it the environment variables
// rocketmq.namesrv.addr and NAMESRV_ADDR are read, then WithNameServerDomain's address
// service is asked, as Java does; with none of them NewPushConsumer fails.
func WithNameServers(addrs ...string) Option {
	return func(c *cfg) {
		c.nameServers = nil
		for _, a := range addrs {
			c.nameServers = append(c.nameServers, splitAddrs(a)...)
		}
	}
}

// WithInstanceName sets the instance name in the client id (ip@instanceName). Default
// "DEFAULT", which a clustering consumer replaces with its process id and start time so
// two consumers of a group on one host never share an id, and which a broadcasting
// consumer keeps so its offsets file is found again after a restart.
func WithInstanceName(name string) Option { return func(c *cfg) { c.instanceName = name } }

// WithClientIP sets the IP in the client id. Default: the host's IPv4 address as Java
// picks it (one outside 127.* and 192.168.* first).
func WithClientIP(ip string) Option { return func(c *cfg) { c.clientIP = ip } }

// WithMessageModel sets clustering (default) or broadcasting.
func WithMessageModel(m MessageModel) Option { return func(c *cfg) { c.model = m } }

// WithConsumeFromWhere sets where a group with no stored offset starts on a queue.
// Default ConsumeFromLastOffset.
func WithConsumeFromWhere(w ConsumeFromWhere) Option { return func(c *cfg) { c.consumeFrom = w } }

// WithConsumeTimestamp sets the time ConsumeFromTimestamp starts at. Default: half an
// hour before Start.
func WithConsumeTimestamp(t time.Time) Option { return func(c *cfg) { c.consumeTimestamp = t } }

// WithAllocateStrategy sets how the group's queues are shared among its members.
// Default: rebalance.Averagely (Java's AVG).
func WithAllocateStrategy(s AllocateStrategy) Option {
	return func(c *cfg) { c.allocateStrategy = s }
}

// AllocateStrategy decides which queues of a topic a member consumes; the strategies of
// package rebalance (Averagely, AveragelyByCircle, ByConfig, ByMachineRoom,
// MachineRoomNearby, ConsistentHash) give Java's results.
type AllocateStrategy = rebalance.AllocateStrategy

// WithConsumeGoroutineNums sets the number of consume workers. Default 20, range
// [1, 1000]. It bounds the listener calls running at once, those on read loops (see
// WithReadLoopConsume) included.
func WithConsumeGoroutineNums(n int) Option { return func(c *cfg) { c.consumeGoroutines = n } }

// DefaultReadLoopCallAvg is WithReadLoopConsume's default: listener calls of 25 µs or
// less on average run on the read loops.
const DefaultReadLoopCallAvg = quickCall / 2

// WithReadLoopConsume lets a concurrent consumer run its listener calls on the goroutine
// that read their messages off the broker's connection, when that goroutine has nothing
// else to read, instead of waking a consume worker for them, as long as the calls took
// at most maxAvg on average (with the consume bookkeeping of each call). A worker's
// wake-up costs more than a quick call, and on a machine shared with the broker the
// broker's CPU too. Orderly and POP consumption always use the workers, and a call that
// runs long on a read loop (over 1 ms) has the connection's reading taken over by
// another goroutine, so nothing waits on it. Results, retries, offsets and the bound of
// WithConsumeGoroutineNums are the same either way. Default DefaultReadLoopCallAvg;
// range [0, 1ms]; 0 runs every call on the workers.
func WithReadLoopConsume(maxAvg time.Duration) Option {
	return func(c *cfg) { c.readLoopCallAvg = maxAvg }
}

// WithLentBodies lends message bodies to the listener instead of giving every pulled
// message memory of its own: a pull's answer is read off the connection into a buffer
// the consumer reuses for a later answer once every listener call on its messages has
// returned and their send-backs and bookkeeping are over. A message's Body is then
// valid only until the listener call that received it returns, as bufio.Scanner.Bytes
// is only until the next Scan: a listener, consume hook, send-back hook, message filter
// (WithMessageFilter) or RPC hook (the pull's or pop's answer, the retry-topic
// fallback's request) that keeps a body (or a slice of it) beyond its call must copy it
// first (bytes.Clone). Every other field, Topic and properties included, stays valid
// for as long as it is kept. The buffers are rounded up to a power of two (at most 8
// MiB of them are kept free by the pulls, and as much by the pops), so the memory a
// queue's cached messages hold may reach twice what WithPullThresholdSizeForQueue
// counts, which is their bodies' length; with POP, one message still in its listener
// call keeps its whole pop's buffer (up to 32 messages) after the others are acked.
//
// It saves allocating, zeroing and collecting the pulled bytes, which grows with the
// message size: for 1 KiB messages up to a quarter of the consumer's CPU per message,
// for 128 B nothing (the README's "Lent bodies" has the measurements). For every kind
// of consumption: concurrent, orderly (an orderly queue's buffers are kept until its
// commits pass their messages, so a suspended batch is consumed again with its bodies)
// and POP (a pop's buffer is kept until the ack, retry delay or abandonment of every
// message of it is sent, and a dead letter's send and send-back hooks have returned;
// messages the subscription or filter drops hold nothing). Default off.
func WithLentBodies() Option { return func(c *cfg) { c.lentBodies = true } }

// WithConsumeMessageBatchMaxSize sets the most messages one listener call gets. Default
// 1, range [1, 1024].
func WithConsumeMessageBatchMaxSize(n int) Option {
	return func(c *cfg) { c.consumeBatchMaxSize = n }
}

// WithPullBatchSize sets the most messages one pull asks for. Default 32, range
// [1, 1024]; a 4.x broker returns at most 32 from memory whatever is asked.
func WithPullBatchSize(n int) Option { return func(c *cfg) { c.pullBatchSize = n } }

// WithPullInterval sets a pause after each pull that found messages. Default 0.
func WithPullInterval(d time.Duration) Option { return func(c *cfg) { c.pullInterval = d } }

// WithConsumeConcurrentlyMaxSpan holds pulls back while the offsets of a queue's cached
// messages span more than n (concurrent consumption). Default 2000, range [1, 65535].
func WithConsumeConcurrentlyMaxSpan(n int) Option { return func(c *cfg) { c.maxSpan = n } }

// WithPullThresholdForQueue holds pulls back while a queue caches more than n messages.
// Default 1000, range [1, 65535].
func WithPullThresholdForQueue(n int) Option { return func(c *cfg) { c.pullThresholdForQueue = n } }

// WithPullThresholdSizeForQueue holds pulls back while a queue caches more than mib MiB
// of bodies. Default 100, range [1, 1024].
func WithPullThresholdSizeForQueue(mib int) Option {
	return func(c *cfg) { c.pullThresholdSizeMiB = mib }
}

// WithPullThresholdForTopic limits the messages cached per topic: each of the topic's
// queues gets max(1, n / queues) instead of WithPullThresholdForQueue. Default -1, off.
func WithPullThresholdForTopic(n int) Option { return func(c *cfg) { c.pullThresholdForTopic = n } }

// WithPullThresholdSizeForTopic limits the MiB cached per topic, as
// WithPullThresholdForTopic does the count. Default -1, off.
func WithPullThresholdSizeForTopic(mib int) Option {
	return func(c *cfg) { c.pullThresholdSizeTopic = mib }
}

// WithMaxReconsumeTimes sets how often a message is retried before it goes to the
// dead-letter queue. Default -1: 16 for concurrent consumption, unlimited for orderly.
func WithMaxReconsumeTimes(n int) Option { return func(c *cfg) { c.maxReconsumeTimes = n } }

// WithSuspendCurrentQueueTime sets how long an orderly queue waits after
// SuspendCurrentQueueAMoment. Default 1s, range [10ms, 30s].
func WithSuspendCurrentQueueTime(d time.Duration) Option {
	return func(c *cfg) { c.suspendCurrentQueueTime = d }
}

// WithConsumeTimeout sets how long a message may stay in a listener call before it is
// sent back for a retry so the queue's offset can move on. Default 15 min.
func WithConsumeTimeout(d time.Duration) Option { return func(c *cfg) { c.consumeTimeout = d } }

// WithPostSubscriptionWhenPull sends the subscription expression with every pull.
// Default false: the broker uses the one from the heartbeat.
func WithPostSubscriptionWhenPull(on bool) Option {
	return func(c *cfg) { c.postSubscriptionWhenPull = on }
}

// WithTakeoverGrace sets how long a queue gained in a rebalance waits before it starts,
// when the group has other members. The member giving the queue up rebalances at the
// same moment; it finishes its listener calls on the queue and persists the queue's
// offset first, so the new owner starts where it stopped instead of consuming its last
// messages again. Default 1s; 0 starts gained queues at once, as Java does.
func WithTakeoverGrace(d time.Duration) Option { return func(c *cfg) { c.takeoverGrace = d } }

// WithLockRenewInterval sets how often an orderly clustering consumer renews its broker
// locks. Default 20s (Java's rocketmq.client.rebalance.lockInterval); must stay below
// the 30s a local lock is trusted.
func WithLockRenewInterval(d time.Duration) Option { return func(c *cfg) { c.lockRenewInterval = d } }

// WithHeartbeatInterval sets how often heartbeats are sent. Default 30s.
func WithHeartbeatInterval(d time.Duration) Option { return func(c *cfg) { c.heartbeatInterval = d } }

// WithPollNameServerInterval sets how often topic routes are refreshed. Default 30s.
func WithPollNameServerInterval(d time.Duration) Option {
	return func(c *cfg) { c.routeInterval = d }
}

// WithPersistConsumerOffsetInterval sets how often changed offsets are written to the
// broker (or the local file). Default 5s.
func WithPersistConsumerOffsetInterval(d time.Duration) Option {
	return func(c *cfg) { c.persistInterval = d }
}

// WithCommitInterval sets how soon, at most, an offset that moved reaches the broker in
// clustering (an UPDATE_CONSUMER_OFFSET per changed queue). A consumer that dies
// without Shutdown leaves the messages consumed since its last commit to be consumed
// again by the queue's next owner; Java commits only with the next pull or every 5 s.
// Nothing is sent while nothing changes. Default 10ms; 0 turns it off (then offsets
// move with pulls and WithPersistConsumerOffsetInterval only, as in Java).
func WithCommitInterval(d time.Duration) Option { return func(c *cfg) { c.commitInterval = d } }

// WithRebalanceInterval sets how often the assignment is recomputed besides the
// brokers' notifications. Default 20s.
func WithRebalanceInterval(d time.Duration) Option {
	return func(c *cfg) { c.rebalanceInterval = d }
}

// WithRequestTimeout bounds broker and name-server calls (Java's mqClientApiTimeout).
// Default 3s.
func WithRequestTimeout(d time.Duration) Option { return func(c *cfg) { c.apiTimeout = d } }

// WithOffsetStoreDir sets the directory of a broadcasting consumer's offsets file.
// Default ~/.rocketmq_offsets, as Java.
func WithOffsetStoreDir(dir string) Option { return func(c *cfg) { c.offsetStoreDir = dir } }

// WithHeaderEncoding sets how request headers are serialized. Default HeaderJSON; answers
// are read in either encoding whatever this says.
func WithHeaderEncoding(e HeaderEncoding) Option { return func(c *cfg) { c.headers = e } }

// WithTLS connects to every server with TLS. Verification follows config: set
// InsecureSkipVerify there only if you mean it.
func WithTLS(config *tls.Config) Option { return func(c *cfg) { c.tls = config } }

// WithCredentials signs every request with ACL credentials.
func WithCredentials(cr Credentials) Option { return func(c *cfg) { c.credentials = &cr } }

// WithLogger sets the logger. Default: none; nil means none too. A *slog.Logger is
// passed as logging.Slog(l), a logrus one as logging.Logrus(l) (package
// github.com/rmqpush/rmqpush/logging).
func WithLogger(l Logger) Option {
	return func(c *cfg) {
		if l == nil {
			l = logging.Nop()
		}
		c.logger = l
	}
}

// WithHooks installs hooks: values implementing any of the Hook* interfaces (see Hook),
// such as the metrics and tracing plugin plugin/rmqotel. Hooks are called in the order
// installed. Default: none.
func WithHooks(hooks ...Hook) Option { return func(c *cfg) { c.hooks = append(c.hooks, hooks...) } }
