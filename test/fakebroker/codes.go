package fakebroker

import "github.com/rmqpush/rmqpush/internal/protocol"

// Request codes the fake cluster handles, for Fault.Code and Requests. They are Java's
// RequestCode values.
const (
	RequestSendMessage               int32 = 10
	RequestPullMessage               int32 = 11
	RequestQueryConsumerOffset       int32 = 14
	RequestUpdateConsumerOffset      int32 = 15
	RequestUpdateAndCreateTopic      int32 = 17
	RequestSearchOffsetByTimestamp   int32 = 29
	RequestGetMaxOffset              int32 = 30
	RequestGetMinOffset              int32 = 31
	RequestViewMessageByID           int32 = 33
	RequestHeartBeat                 int32 = 34
	RequestUnregisterClient          int32 = 35
	RequestConsumerSendMsgBack       int32 = 36
	RequestGetConsumerListByGroup    int32 = 38
	RequestLockBatchMQ               int32 = 41
	RequestUnlockBatchMQ             int32 = 42
	RequestCheckClientConfig         int32 = 46
	RequestGetRouteInfoByTopic       int32 = 105
	RequestGetBrokerClusterInfo      int32 = 106
	RequestInvokeBrokerToResetOffset int32 = 222
	RequestSendMessageV2             int32 = 310
	RequestSendBatchMessage          int32 = 320
	// RocketMQ 5, with WithRocketMQ5.
	RequestQueryAssignment            int32 = 400
	RequestSetMessageRequestMode      int32 = 401
	RequestPopMessage                 int32 = 200050
	RequestAckMessage                 int32 = 200051
	RequestChangeMessageInvisibleTime int32 = 200053
	RequestBatchAckMessage            int32 = 200151
)

// Response codes a Fault can answer with (Fault.Fail): Java's ResponseCode values a
// client treats specially.
const (
	ResponseSystemError               int32 = 1
	ResponseSystemBusy                int32 = 2
	ResponseServiceNotAvailable       int32 = 14
	ResponseNoPermission              int32 = 16
	ResponseTopicNotExist             int32 = 17
	ResponseSubscriptionParseFailed   int32 = 23
	ResponseSubscriptionNotExist      int32 = 24
	ResponseSubscriptionNotLatest     int32 = 25
	ResponseSubscriptionGroupNotExist int32 = 26
	ResponseFilterDataNotExist        int32 = 27
	ResponseFilterDataNotLatest       int32 = 28
	ResponseFlowControl               int32 = 215
	ResponsePollingFull               int32 = 209 // RocketMQ 5: too many pops held
	ResponsePollingTimeout            int32 = 210 // RocketMQ 5: a pop found nothing
)

// ConsumerRunningInfo is a consumer's answer to GET_CONSUMER_RUNNING_INFO
// (Broker.ConsumerRunningInfo): its properties, subscriptions, process queues and
// statistics, as Java's ConsumerRunningInfo.
type ConsumerRunningInfo = protocol.ConsumerRunningInfo

// ConsumeMessageDirectlyResult is a consumer's answer to CONSUME_MESSAGE_DIRECTLY
// (Broker.ConsumeMessageDirectly).
type ConsumeMessageDirectlyResult = protocol.ConsumeMessageDirectlyResult
