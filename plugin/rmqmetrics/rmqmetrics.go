// Package rmqmetrics is the vocabulary both metrics plugins publish, so that their
// series are the same whichever a service uses: plugin/rmqotel (OpenTelemetry) and
// plugin/rmqprom (Prometheus' client_golang). The first four metrics are those of
// RocketMQ 5's own clients (rocketmq-clients' HistogramEnum and GaugeEnum, rocketmq-site
// "Metrics", consumer section); the others follow their style for what only RocketMQ's
// brokers publish otherwise, seen from the client. Durations are in milliseconds, as
// RocketMQ's are.
package rmqmetrics

// Metric names.
const (
	ProcessTime    = "rocketmq_process_time"             // histogram, ms: listener call duration, once per message of the call
	AwaitTime      = "rocketmq_await_time"               // histogram, ms: from caching (after the pull) to the listener call, per message
	CachedMessages = "rocketmq_consumer_cached_messages" // gauge: messages pulled and not consumed yet, per topic
	CachedBytes    = "rocketmq_consumer_cached_bytes"    // gauge, bytes: their bodies, per topic

	LagMessages    = "rocketmq_consumer_lag_messages"               // gauge: broker max offset (from pull answers) − committed offset, per queue
	LagLatency     = "rocketmq_consumer_lag_latency"                // gauge, ms: now − store time of the oldest unconsumed cached message (0 when none), per queue
	Pulls          = "rocketmq_pull_total"                          // counter: pulls answered (success) or failed (failure), per broker
	PullLatency    = "rocketmq_pull_latency"                        // histogram, ms: pull round trip, long polls included, per broker
	PulledMessages = "rocketmq_pulled_messages_total"               // counter: messages pulled, per topic and broker
	SendBacks      = "rocketmq_consumer_send_back_messages_total"   // counter: messages handed back for a retry (success), or that could not be (failure)
	DeadLetters    = "rocketmq_consumer_dlq_messages_total"         // counter: messages sent to the dead-letter queue
	LocalRetries   = "rocketmq_consumer_local_retry_messages_total" // counter: messages to be consumed again locally
)

// Label names.
const (
	LabelTopic    = "topic"
	LabelGroup    = "consumer_group"
	LabelClientID = "client_id"
	LabelStatus   = "invocation_status" // StatusSuccess or StatusFailure
	LabelBroker   = "broker"
	LabelQueueID  = "queue_id"
)

// Values of LabelStatus, as RocketMQ's InvocationStatus names them.
const (
	StatusSuccess = "success"
	StatusFailure = "failure"
)

// Histogram bucket boundaries, in milliseconds: RocketMQ 5's clients' for process and
// await time (rocketmq-clients' HistogramEnum: the site's table leaves process time's
// 1000 out), and long-poll-aware ones for pulls, which a broker holds up to 15 s.
// Functions, so that no caller can change another's.
func ProcessTimeBuckets() []float64 { return []float64{1, 5, 10, 100, 1000, 10000, 60000} }

// AwaitTimeBuckets are rocketmq_await_time's boundaries.
func AwaitTimeBuckets() []float64 { return []float64{1, 5, 20, 100, 1000, 5000, 10000} }

// PullLatencyBuckets are rocketmq_pull_latency's boundaries.
func PullLatencyBuckets() []float64 { return []float64{1, 5, 10, 100, 1000, 5000, 15000, 30000} }

// Description returns a metric's help text ("" for an unknown name).
func Description(name string) string {
	switch name {
	case ProcessTime:
		return "Listener call duration in ms, recorded once per message of the call."
	case AwaitTime:
		return "Time in ms a message waited in the local cache before its listener call."
	case CachedMessages:
		return "Messages pulled and not consumed yet."
	case CachedBytes:
		return "Body bytes of the messages pulled and not consumed yet."
	case LagMessages:
		return "Broker max offset from the pull answers minus the committed offset."
	case LagLatency:
		return "Now minus the store time of the oldest message pulled and not consumed yet, in ms (0 when none)."
	case Pulls:
		return "Pulls answered (success) or failed (failure)."
	case PullLatency:
		return "Pull round trip in ms, long polls included."
	case PulledMessages:
		return "Messages pulled."
	case SendBacks:
		return "Messages handed back to the broker for a later retry (success), or that could not be (failure)."
	case DeadLetters:
		return "Messages sent to the dead-letter queue."
	case LocalRetries:
		return "Messages to be consumed again by this consumer: send-back failed, or an orderly queue suspended."
	default:
		return ""
	}
}

// MillisPerNanosecond turns a time.Duration into the milliseconds RocketMQ records.
const MillisPerNanosecond = 1e-6
