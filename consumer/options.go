package consumer

import (
	"crypto/tls"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/rebalance"
)

// MessageModel says how a group shares its topics' messages.
type MessageModel int

const (
	// Clustering gives each message to one member of the group (the default).
	Clustering MessageModel = iota
	// Broadcasting gives every message to every member; offsets are kept in a local file.
	Broadcasting
)

// String returns the name Java uses.
func (m MessageModel) String() string {
	switch m {
	case Clustering:
		return "CLUSTERING"
	case Broadcasting:
		return "BROADCASTING"
	default:
		return fmt.Sprintf("MessageModel(%d)", int(m))
	}
}

// ConsumeFromWhere says where a group with no stored offset for a queue starts.
type ConsumeFromWhere int

const (
	// ConsumeFromLastOffset starts at the queue's end (the default). Note that a 4.x
	// broker answers offset 0 instead of "not found" while a queue's first message is
	// still stored, so a new group then starts from the beginning, as with Java.
	ConsumeFromLastOffset ConsumeFromWhere = iota
	// ConsumeFromFirstOffset starts at the queue's beginning.
	ConsumeFromFirstOffset
	// ConsumeFromTimestamp starts at the first message stored at or after
	// WithConsumeTimestamp's time (default: half an hour before Start).
	ConsumeFromTimestamp
)

// String returns the name Java uses.
func (c ConsumeFromWhere) String() string {
	switch c {
	case ConsumeFromLastOffset:
		return "CONSUME_FROM_LAST_OFFSET"
	case ConsumeFromFirstOffset:
		return "CONSUME_FROM_FIRST_OFFSET"
	case ConsumeFromTimestamp:
		return "CONSUME_FROM_TIMESTAMP"
	default:
		return fmt.Sprintf("ConsumeFromWhere(%d)", int(c))
	}
}

// Logger receives the consumer's log lines; see WithLogger. Package
// github.com/rmqpush/rmqpush/logging adapts log/slog and logrus loggers to it.
type Logger = logging.Logger

// LogLevel is a log level for Logger.
type LogLevel = logging.Level

// Log levels.
const (
	LogNone  = logging.LevelNone
	LogError = logging.LevelError
	LogWarn  = logging.LevelWarn
	LogInfo  = logging.LevelInfo
	LogDebug = logging.LevelDebug
)

// Option configures a PushConsumer. Options are checked together by NewPushConsumer,
// whose error names the option at fault.
type Option func(*cfg)

// cfg is every setting of a consumer. defaultCfg is the only place defaults live and
// validate the only place they are checked.
type cfg struct {
	nameServers       []string
	nameServerDomain  string // WithNameServerDomain
	nameServerURL     string // the address service, when no address is given
	namespace         string
	endpointNamespace string // the namespace of an instance endpoint address
	instanceName      string
	clientIP          string

	model            MessageModel
	consumeFrom      ConsumeFromWhere
	consumeTimestamp time.Time // zero: half an hour before Start
	allocateStrategy AllocateStrategy

	consumeGoroutines        int
	readLoopCallAvg          time.Duration // WithReadLoopConsume; 0: off
	lentBodies               bool          // WithLentBodies
	consumeBatchMaxSize      int
	pullBatchSize            int
	pullInterval             time.Duration
	maxSpan                  int
	pullThresholdForQueue    int
	pullThresholdSizeMiB     int
	pullThresholdForTopic    int
	pullThresholdSizeTopic   int
	maxReconsumeTimes        int
	suspendCurrentQueueTime  time.Duration
	consumeTimeout           time.Duration
	postSubscriptionWhenPull bool
	takeoverGrace            time.Duration
	lockRenewInterval        time.Duration
	commitInterval           time.Duration
	headers                  HeaderEncoding

	clientRebalance      bool // options_pop.go
	popInvisibleTime     time.Duration
	popBatchSize         int
	popsInFlight         int
	popThresholdForQueue int
	popDelayLevels       []time.Duration

	heartbeatInterval time.Duration
	routeInterval     time.Duration
	persistInterval   time.Duration
	rebalanceInterval time.Duration
	apiTimeout        time.Duration
	pullSuspend       time.Duration
	pullTimeout       time.Duration

	offsetStoreDir string

	tls           *tls.Config
	credentials   *Credentials
	rpcHooks      []RPCHook
	filters       []MessageFilter
	queueListener MessageQueueListener
	logger        Logger
	hooks         []Hook
	trace         *MessageTrace // nil: message trace off
}

// HeaderEncoding is how request headers are serialized on the wire.
type HeaderEncoding int

const (
	// HeaderJSON sends request headers as JSON, as Java clients do by default.
	HeaderJSON HeaderEncoding = iota
	// HeaderRocketMQ sends them in RocketMQ's binary serialization (Java's
	// -Drocketmq.serialize.type=ROCKETMQ), which 4.x and 5.x brokers and name servers
	// accept: measured about 5 % less CPU per message than JSON.
	HeaderRocketMQ
)

// String returns the encoding's name as Java's serialize types are named.
func (e HeaderEncoding) String() string {
	switch e {
	case HeaderJSON:
		return "JSON"
	case HeaderRocketMQ:
		return "ROCKETMQ"
	default:
		return fmt.Sprintf("HeaderEncoding(%d)", int(e))
	}
}

// Credentials are ACL credentials; requests are signed with HMAC-SHA1 as Java's
// AclClientRPCHook does. SecurityToken is optional (STS).
type Credentials struct {
	AccessKey     string // the ACL access key
	SecretKey     string // the key requests are signed with
	SecurityToken string // optional: an STS token
}

func defaultCfg() cfg {
	return cfg{
		instanceName:            "DEFAULT",
		model:                   Clustering,
		consumeFrom:             ConsumeFromLastOffset,
		allocateStrategy:        rebalance.Averagely{},
		consumeGoroutines:       20,
		readLoopCallAvg:         DefaultReadLoopCallAvg,
		consumeBatchMaxSize:     1,
		pullBatchSize:           32,
		maxSpan:                 2000,
		pullThresholdForQueue:   1000,
		pullThresholdSizeMiB:    100,
		pullThresholdForTopic:   -1,
		pullThresholdSizeTopic:  -1,
		maxReconsumeTimes:       -1,
		suspendCurrentQueueTime: time.Second,
		consumeTimeout:          15 * time.Minute,
		takeoverGrace:           time.Second,
		lockRenewInterval:       20 * time.Second,
		commitInterval:          10 * time.Millisecond,
		heartbeatInterval:       30 * time.Second,
		routeInterval:           30 * time.Second,
		persistInterval:         5 * time.Second,
		rebalanceInterval:       20 * time.Second,
		apiTimeout:              3 * time.Second,
		pullSuspend:             15 * time.Second,
		pullTimeout:             30 * time.Second,
		logger:                  logging.Nop(),
		clientRebalance:         true,
		popInvisibleTime:        60 * time.Second,
		popBatchSize:            32,
		popsInFlight:            4,
		popThresholdForQueue:    96,
		popDelayLevels:          defaultPopDelayLevels(),
	}
}

// optionError names the option a bad value came from.
func optionError(option string, format string, args ...any) error {
	return fmt.Errorf("consumer: option %s: %s", option, fmt.Sprintf(format, args...))
}

func (c *cfg) validate() error {
	intRanges := []struct {
		option   string
		v        int
		min, max int
	}{
		{"WithConsumeGoroutineNums", c.consumeGoroutines, 1, 1000},
		{"WithConsumeMessageBatchMaxSize", c.consumeBatchMaxSize, 1, 1024},
		{"WithPullBatchSize", c.pullBatchSize, 1, 1024},
		{"WithConsumeConcurrentlyMaxSpan", c.maxSpan, 1, 65535},
		{"WithPullThresholdForQueue", c.pullThresholdForQueue, 1, 65535},
		{"WithPullThresholdSizeForQueue", c.pullThresholdSizeMiB, 1, 1024},
	}
	for _, r := range intRanges {
		if r.v < r.min || r.v > r.max {
			return optionError(r.option, "%d is out of range [%d, %d]", r.v, r.min, r.max)
		}
	}
	if c.pullThresholdForTopic != -1 && (c.pullThresholdForTopic < 1 || c.pullThresholdForTopic > 6553500) {
		return optionError("WithPullThresholdForTopic", "%d is out of range [1, 6553500] (or -1 for off)", c.pullThresholdForTopic)
	}
	if c.pullThresholdSizeTopic != -1 && (c.pullThresholdSizeTopic < 1 || c.pullThresholdSizeTopic > 102400) {
		return optionError("WithPullThresholdSizeForTopic", "%d MiB is out of range [1, 102400] (or -1 for off)", c.pullThresholdSizeTopic)
	}
	if c.pullInterval < 0 || c.pullInterval > 65535*time.Millisecond {
		return optionError("WithPullInterval", "%v is out of range [0, 65.535s]", c.pullInterval)
	}
	if c.maxReconsumeTimes < -1 {
		return optionError("WithMaxReconsumeTimes", "%d must be -1 (default) or at least 0", c.maxReconsumeTimes)
	}
	if c.suspendCurrentQueueTime < 10*time.Millisecond || c.suspendCurrentQueueTime > 30*time.Second {
		return optionError("WithSuspendCurrentQueueTime", "%v is out of range [10ms, 30s]", c.suspendCurrentQueueTime)
	}
	if c.lockRenewInterval >= processqueue.LockMaxLiveTime {
		return optionError("WithLockRenewInterval", "%v must be shorter than the %v a local lock is trusted", c.lockRenewInterval, processqueue.LockMaxLiveTime)
	}
	if c.takeoverGrace < 0 || c.takeoverGrace > time.Minute {
		return optionError("WithTakeoverGrace", "%v is out of range [0, 1m]", c.takeoverGrace)
	}
	if c.readLoopCallAvg < 0 || c.readLoopCallAvg > idleTakeover {
		return optionError("WithReadLoopConsume", "%v is out of range [0, %v]", c.readLoopCallAvg, idleTakeover)
	}
	if c.consumeTimeout < time.Second {
		return optionError("WithConsumeTimeout", "%v is shorter than 1s", c.consumeTimeout)
	}
	durations := []struct {
		option string
		v      time.Duration
	}{
		{"WithHeartbeatInterval", c.heartbeatInterval},
		{"WithPollNameServerInterval", c.routeInterval},
		{"WithPersistConsumerOffsetInterval", c.persistInterval},
		{"WithRebalanceInterval", c.rebalanceInterval},
		{"WithLockRenewInterval", c.lockRenewInterval},
		{"WithRequestTimeout", c.apiTimeout},
	}
	for _, d := range durations {
		if d.v < 10*time.Millisecond {
			return optionError(d.option, "%v is shorter than 10ms", d.v)
		}
	}
	if c.commitInterval < 0 || c.commitInterval > c.persistInterval {
		return optionError("WithCommitInterval", "%v is out of range [0, the persist interval %v]", c.commitInterval, c.persistInterval)
	}
	if c.headers != HeaderJSON && c.headers != HeaderRocketMQ {
		return optionError("WithHeaderEncoding", "unknown value %d", int(c.headers))
	}
	if c.consumeFrom < ConsumeFromLastOffset || c.consumeFrom > ConsumeFromTimestamp {
		return optionError("WithConsumeFromWhere", "unknown value %d", int(c.consumeFrom))
	}
	if c.model != Clustering && c.model != Broadcasting {
		return optionError("WithMessageModel", "unknown value %d", int(c.model))
	}
	if !validNamespace(c.namespace) {
		return optionError("WithNamespace", "%q has a character outside [|a-zA-Z0-9_-]", c.namespace)
	}
	if c.instanceName == "" || strings.ContainsAny(c.instanceName, "@ /\\") {
		return optionError("WithInstanceName", "%q must be non-empty without '@', spaces or slashes", c.instanceName)
	}
	if c.credentials != nil && (c.credentials.AccessKey == "" || c.credentials.SecretKey == "") {
		return optionError("WithCredentials", "access key and secret key are both required")
	}
	if c.allocateStrategy == nil {
		return optionError("WithAllocateStrategy", "strategy is nil")
	}
	if err := c.validatePop(); err != nil {
		return err
	}
	if c.pullInterval > 0 && c.pullInterval < time.Millisecond {
		return optionError("WithPullInterval", "%v is below the 1ms resolution", c.pullInterval)
	}
	if c.clientIP != "" {
		if _, err := netip.ParseAddr(c.clientIP); err != nil {
			return optionError("WithClientIP", "%q is not an IP address", c.clientIP)
		}
	}
	if c.trace != nil {
		if err := c.trace.validate(); err != nil {
			return err
		}
	}
	for i, h := range c.hooks {
		if h == nil {
			return optionError("WithHooks", "hook %d is nil", i+1)
		}
		if !implementsAny(h) {
			return optionError("WithHooks", "hook %d (%T) implements none of the Hook interfaces", i+1, h)
		}
	}
	for i, h := range c.rpcHooks {
		if h == nil {
			return optionError("WithRPCHook", "hook %d is nil", i+1)
		}
	}
	for i, f := range c.filters {
		if f == nil {
			return optionError("WithMessageFilter", "filter %d is nil", i+1)
		}
	}
	return nil
}
