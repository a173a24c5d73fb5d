package protocol

import "strconv"

// RequestCode is the code of a request (Java's RequestCode). It is an alias of int32 so
// the constants below are assignable to remoting.Command.Code as they are.
type RequestCode = int32

// ResponseCode is the code of a response (Java's ResponseCode and
// RemotingSysResponseCode). It is an alias of int32 for the same reason as RequestCode.
type ResponseCode = int32

// Request codes used by a push consumer, a producer, a name server, admin tools and the
// fake broker.
const (
	RequestSendMessage                    RequestCode = 10
	RequestPullMessage                    RequestCode = 11
	RequestQueryMessage                   RequestCode = 12
	RequestQueryBrokerOffset              RequestCode = 13
	RequestQueryConsumerOffset            RequestCode = 14
	RequestUpdateConsumerOffset           RequestCode = 15
	RequestUpdateAndCreateTopic           RequestCode = 17
	RequestGetAllTopicConfig              RequestCode = 21
	RequestGetBrokerRuntimeInfo           RequestCode = 28
	RequestSearchOffsetByTimestamp        RequestCode = 29
	RequestGetMaxOffset                   RequestCode = 30
	RequestGetMinOffset                   RequestCode = 31
	RequestGetEarliestMsgStoreTime        RequestCode = 32
	RequestViewMessageByID                RequestCode = 33
	RequestHeartBeat                      RequestCode = 34
	RequestUnregisterClient               RequestCode = 35
	RequestConsumerSendMsgBack            RequestCode = 36
	RequestEndTransaction                 RequestCode = 37
	RequestGetConsumerListByGroup         RequestCode = 38
	RequestCheckTransactionState          RequestCode = 39
	RequestNotifyConsumerIDsChanged       RequestCode = 40
	RequestLockBatchMQ                    RequestCode = 41
	RequestUnlockBatchMQ                  RequestCode = 42
	RequestGetAllConsumerOffset           RequestCode = 43
	RequestGetAllDelayOffset              RequestCode = 45
	RequestCheckClientConfig              RequestCode = 46
	RequestPutKVConfig                    RequestCode = 100
	RequestGetKVConfig                    RequestCode = 101
	RequestDeleteKVConfig                 RequestCode = 102
	RequestRegisterBroker                 RequestCode = 103
	RequestUnregisterBroker               RequestCode = 104
	RequestGetRouteInfoByTopic            RequestCode = 105
	RequestGetBrokerClusterInfo           RequestCode = 106
	RequestUpdateAndCreateSubscriptionGrp RequestCode = 200
	RequestGetAllSubscriptionGroupConfig  RequestCode = 201
	RequestGetTopicStatsInfo              RequestCode = 202
	RequestGetConsumerConnectionList      RequestCode = 203
	RequestGetProducerConnectionList      RequestCode = 204
	RequestGetAllTopicListFromNameServer  RequestCode = 206
	RequestDeleteSubscriptionGroup        RequestCode = 207
	RequestGetConsumeStats                RequestCode = 208
	RequestDeleteTopicInBroker            RequestCode = 215
	RequestDeleteTopicInNameServer        RequestCode = 216
	RequestResetConsumerClientOffset      RequestCode = 220
	RequestGetConsumerStatusFromClient    RequestCode = 221
	RequestInvokeBrokerToResetOffset      RequestCode = 222
	RequestInvokeBrokerToGetConsumerStats RequestCode = 223
	RequestGetTopicsByCluster             RequestCode = 224
	RequestQueryTopicConsumeByWho         RequestCode = 300
	RequestQueryConsumeTimeSpan           RequestCode = 303
	RequestGetConsumerRunningInfo         RequestCode = 307
	RequestQueryCorrectionOffset          RequestCode = 308
	RequestConsumeMessageDirectly         RequestCode = 309
	RequestSendMessageV2                  RequestCode = 310
	RequestGetTopicConfig                 RequestCode = 351
	RequestCloneGroupOffset               RequestCode = 314
	RequestGetBrokerConsumeStats          RequestCode = 317
	RequestSendBatchMessage               RequestCode = 320
	RequestQueryConsumeQueue              RequestCode = 321
	RequestSendReplyMessage               RequestCode = 324
	RequestSendReplyMessageV2             RequestCode = 325
	RequestPushReplyMessageToClient       RequestCode = 326
	RequestLitePullMessage                RequestCode = 361
	RequestQueryAssignment                RequestCode = 400
	RequestSetMessageRequestMode          RequestCode = 401
	RequestGetAllMessageRequestMode       RequestCode = 402
)

// Request codes of RocketMQ 5's POP consumption. They do not fit the 16-bit code of the
// ROCKETMQ header serialization (a 5.3.3 broker reads 200050 written there as 3442 and
// refuses it: golden p3_pop_rocketmq_533), so they always travel in JSON headers.
const (
	RequestPopMessage                 RequestCode = 200050
	RequestAckMessage                 RequestCode = 200051
	RequestPeekMessage                RequestCode = 200052
	RequestChangeMessageInvisibleTime RequestCode = 200053
	RequestNotification               RequestCode = 200054
	RequestPollingInfo                RequestCode = 200055
	RequestPopRollback                RequestCode = 200056
	RequestBatchAckMessage            RequestCode = 200151
)

// Response codes. A pull's status is its response code (PROTOCOL.md §3.8).
const (
	ResponseSuccess                   ResponseCode = 0
	ResponseSystemError               ResponseCode = 1
	ResponseSystemBusy                ResponseCode = 2
	ResponseRequestCodeNotSupported   ResponseCode = 3
	ResponseTransactionFailed         ResponseCode = 4
	ResponseFlushDiskTimeout          ResponseCode = 10
	ResponseSlaveNotAvailable         ResponseCode = 11
	ResponseFlushSlaveTimeout         ResponseCode = 12
	ResponseMessageIllegal            ResponseCode = 13
	ResponseServiceNotAvailable       ResponseCode = 14
	ResponseVersionNotSupported       ResponseCode = 15
	ResponseNoPermission              ResponseCode = 16
	ResponseTopicNotExist             ResponseCode = 17
	ResponseTopicExistAlready         ResponseCode = 18
	ResponsePullNotFound              ResponseCode = 19
	ResponsePullRetryImmediately      ResponseCode = 20
	ResponsePullOffsetMoved           ResponseCode = 21
	ResponseQueryNotFound             ResponseCode = 22
	ResponseSubscriptionParseFailed   ResponseCode = 23
	ResponseSubscriptionNotExist      ResponseCode = 24
	ResponseSubscriptionNotLatest     ResponseCode = 25
	ResponseSubscriptionGroupNotExist ResponseCode = 26
	ResponseFilterDataNotExist        ResponseCode = 27
	ResponseFilterDataNotLatest       ResponseCode = 28
	ResponseFlushDiskFailed           ResponseCode = 29 // 4.9.8's name; 5.x calls 29 INVALID_PARAMETER
	ResponseInvalidParameter          ResponseCode = 29 // 5.x (POP: maxMsgNums over 32)
	ResponseTransactionShouldCommit   ResponseCode = 200
	ResponseTransactionShouldRollback ResponseCode = 201
	ResponseTransactionStateUnknown   ResponseCode = 202
	ResponseTransactionStateGroupBad  ResponseCode = 203
	ResponseNoBuyerID                 ResponseCode = 204
	ResponseNotInCurrentUnit          ResponseCode = 205
	ResponseConsumerNotOnline         ResponseCode = 206
	ResponseConsumeMsgTimeout         ResponseCode = 207
	ResponseNoMessage                 ResponseCode = 208
	ResponsePollingFull               ResponseCode = 209 // 5.x; 4.9.8 numbered an ACL answer so
	ResponsePollingTimeout            ResponseCode = 210 // 5.x; likewise
	ResponseBrokerNotExist            ResponseCode = 211 // 5.x
	ResponseFlowControl               ResponseCode = 215
	ResponseGoAway                    ResponseCode = 1500
)

// RequestName returns Java's name for a request code, e.g. "PULL_MESSAGE", or
// "REQUEST_<code>" for a code this package does not know.
func RequestName(code int32) string {
	switch code {
	case RequestSendMessage:
		return "SEND_MESSAGE"
	case RequestPullMessage:
		return "PULL_MESSAGE"
	case RequestQueryMessage:
		return "QUERY_MESSAGE"
	case RequestQueryBrokerOffset:
		return "QUERY_BROKER_OFFSET"
	case RequestQueryConsumerOffset:
		return "QUERY_CONSUMER_OFFSET"
	case RequestUpdateConsumerOffset:
		return "UPDATE_CONSUMER_OFFSET"
	case RequestUpdateAndCreateTopic:
		return "UPDATE_AND_CREATE_TOPIC"
	case RequestGetAllTopicConfig:
		return "GET_ALL_TOPIC_CONFIG"
	case RequestGetBrokerRuntimeInfo:
		return "GET_BROKER_RUNTIME_INFO"
	case RequestSearchOffsetByTimestamp:
		return "SEARCH_OFFSET_BY_TIMESTAMP"
	case RequestGetMaxOffset:
		return "GET_MAX_OFFSET"
	case RequestGetMinOffset:
		return "GET_MIN_OFFSET"
	case RequestGetEarliestMsgStoreTime:
		return "GET_EARLIEST_MSG_STORETIME"
	case RequestViewMessageByID:
		return "VIEW_MESSAGE_BY_ID"
	case RequestHeartBeat:
		return "HEART_BEAT"
	case RequestUnregisterClient:
		return "UNREGISTER_CLIENT"
	case RequestConsumerSendMsgBack:
		return "CONSUMER_SEND_MSG_BACK"
	case RequestEndTransaction:
		return "END_TRANSACTION"
	case RequestGetConsumerListByGroup:
		return "GET_CONSUMER_LIST_BY_GROUP"
	case RequestCheckTransactionState:
		return "CHECK_TRANSACTION_STATE"
	case RequestNotifyConsumerIDsChanged:
		return "NOTIFY_CONSUMER_IDS_CHANGED"
	case RequestLockBatchMQ:
		return "LOCK_BATCH_MQ"
	case RequestUnlockBatchMQ:
		return "UNLOCK_BATCH_MQ"
	case RequestGetAllConsumerOffset:
		return "GET_ALL_CONSUMER_OFFSET"
	case RequestGetAllDelayOffset:
		return "GET_ALL_DELAY_OFFSET"
	case RequestCheckClientConfig:
		return "CHECK_CLIENT_CONFIG"
	case RequestPutKVConfig:
		return "PUT_KV_CONFIG"
	case RequestGetKVConfig:
		return "GET_KV_CONFIG"
	case RequestDeleteKVConfig:
		return "DELETE_KV_CONFIG"
	case RequestRegisterBroker:
		return "REGISTER_BROKER"
	case RequestUnregisterBroker:
		return "UNREGISTER_BROKER"
	case RequestGetRouteInfoByTopic:
		return "GET_ROUTEINFO_BY_TOPIC"
	case RequestGetBrokerClusterInfo:
		return "GET_BROKER_CLUSTER_INFO"
	case RequestUpdateAndCreateSubscriptionGrp:
		return "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP"
	case RequestGetAllSubscriptionGroupConfig:
		return "GET_ALL_SUBSCRIPTIONGROUP_CONFIG"
	case RequestGetTopicStatsInfo:
		return "GET_TOPIC_STATS_INFO"
	case RequestGetConsumerConnectionList:
		return "GET_CONSUMER_CONNECTION_LIST"
	case RequestGetProducerConnectionList:
		return "GET_PRODUCER_CONNECTION_LIST"
	case RequestGetAllTopicListFromNameServer:
		return "GET_ALL_TOPIC_LIST_FROM_NAMESERVER"
	case RequestDeleteSubscriptionGroup:
		return "DELETE_SUBSCRIPTIONGROUP"
	case RequestGetConsumeStats:
		return "GET_CONSUME_STATS"
	case RequestDeleteTopicInBroker:
		return "DELETE_TOPIC_IN_BROKER"
	case RequestDeleteTopicInNameServer:
		return "DELETE_TOPIC_IN_NAMESRV"
	case RequestResetConsumerClientOffset:
		return "RESET_CONSUMER_CLIENT_OFFSET"
	case RequestGetConsumerStatusFromClient:
		return "GET_CONSUMER_STATUS_FROM_CLIENT"
	case RequestInvokeBrokerToResetOffset:
		return "INVOKE_BROKER_TO_RESET_OFFSET"
	case RequestInvokeBrokerToGetConsumerStats:
		return "INVOKE_BROKER_TO_GET_CONSUMER_STATUS"
	case RequestGetTopicsByCluster:
		return "GET_TOPICS_BY_CLUSTER"
	case RequestQueryTopicConsumeByWho:
		return "QUERY_TOPIC_CONSUME_BY_WHO"
	case RequestQueryConsumeTimeSpan:
		return "QUERY_CONSUME_TIME_SPAN"
	case RequestGetConsumerRunningInfo:
		return "GET_CONSUMER_RUNNING_INFO"
	case RequestQueryCorrectionOffset:
		return "QUERY_CORRECTION_OFFSET"
	case RequestConsumeMessageDirectly:
		return "CONSUME_MESSAGE_DIRECTLY"
	case RequestSendMessageV2:
		return "SEND_MESSAGE_V2"
	case RequestGetTopicConfig:
		return "GET_TOPIC_CONFIG"
	case RequestCloneGroupOffset:
		return "CLONE_GROUP_OFFSET"
	case RequestGetBrokerConsumeStats:
		return "GET_BROKER_CONSUME_STATS"
	case RequestSendBatchMessage:
		return "SEND_BATCH_MESSAGE"
	case RequestQueryConsumeQueue:
		return "QUERY_CONSUME_QUEUE"
	case RequestSendReplyMessage:
		return "SEND_REPLY_MESSAGE"
	case RequestSendReplyMessageV2:
		return "SEND_REPLY_MESSAGE_V2"
	case RequestPushReplyMessageToClient:
		return "PUSH_REPLY_MESSAGE_TO_CLIENT"
	case RequestLitePullMessage:
		return "LITE_PULL_MESSAGE"
	case RequestQueryAssignment:
		return "QUERY_ASSIGNMENT"
	case RequestSetMessageRequestMode:
		return "SET_MESSAGE_REQUEST_MODE"
	case RequestGetAllMessageRequestMode:
		return "GET_ALL_MESSAGE_REQUEST_MODE"
	case RequestPopMessage:
		return "POP_MESSAGE"
	case RequestAckMessage:
		return "ACK_MESSAGE"
	case RequestPeekMessage:
		return "PEEK_MESSAGE"
	case RequestChangeMessageInvisibleTime:
		return "CHANGE_MESSAGE_INVISIBLETIME"
	case RequestNotification:
		return "NOTIFICATION"
	case RequestPollingInfo:
		return "POLLING_INFO"
	case RequestPopRollback:
		return "POP_ROLLBACK"
	case RequestBatchAckMessage:
		return "BATCH_ACK_MESSAGE"
	}
	return "REQUEST_" + strconv.Itoa(int(code))
}

// ResponseName returns Java's name for a response code, e.g. "SYSTEM_BUSY", or
// "RESPONSE_<code>" for a code this package does not know.
func ResponseName(code int32) string {
	switch code {
	case ResponseSuccess:
		return "SUCCESS"
	case ResponseSystemError:
		return "SYSTEM_ERROR"
	case ResponseSystemBusy:
		return "SYSTEM_BUSY"
	case ResponseRequestCodeNotSupported:
		return "REQUEST_CODE_NOT_SUPPORTED"
	case ResponseTransactionFailed:
		return "TRANSACTION_FAILED"
	case ResponseFlushDiskTimeout:
		return "FLUSH_DISK_TIMEOUT"
	case ResponseSlaveNotAvailable:
		return "SLAVE_NOT_AVAILABLE"
	case ResponseFlushSlaveTimeout:
		return "FLUSH_SLAVE_TIMEOUT"
	case ResponseMessageIllegal:
		return "MESSAGE_ILLEGAL"
	case ResponseServiceNotAvailable:
		return "SERVICE_NOT_AVAILABLE"
	case ResponseVersionNotSupported:
		return "VERSION_NOT_SUPPORTED"
	case ResponseNoPermission:
		return "NO_PERMISSION"
	case ResponseTopicNotExist:
		return "TOPIC_NOT_EXIST"
	case ResponseTopicExistAlready:
		return "TOPIC_EXIST_ALREADY"
	case ResponsePullNotFound:
		return "PULL_NOT_FOUND"
	case ResponsePullRetryImmediately:
		return "PULL_RETRY_IMMEDIATELY"
	case ResponsePullOffsetMoved:
		return "PULL_OFFSET_MOVED"
	case ResponseQueryNotFound:
		return "QUERY_NOT_FOUND"
	case ResponseSubscriptionParseFailed:
		return "SUBSCRIPTION_PARSE_FAILED"
	case ResponseSubscriptionNotExist:
		return "SUBSCRIPTION_NOT_EXIST"
	case ResponseSubscriptionNotLatest:
		return "SUBSCRIPTION_NOT_LATEST"
	case ResponseSubscriptionGroupNotExist:
		return "SUBSCRIPTION_GROUP_NOT_EXIST"
	case ResponseFilterDataNotExist:
		return "FILTER_DATA_NOT_EXIST"
	case ResponseFilterDataNotLatest:
		return "FILTER_DATA_NOT_LATEST"
	case ResponseFlushDiskFailed:
		return "FLUSH_DISK_FAILED"
	case ResponseTransactionShouldCommit:
		return "TRANSACTION_SHOULD_COMMIT"
	case ResponseTransactionShouldRollback:
		return "TRANSACTION_SHOULD_ROLLBACK"
	case ResponseTransactionStateUnknown:
		return "TRANSACTION_STATE_UNKNOW"
	case ResponseTransactionStateGroupBad:
		return "TRANSACTION_STATE_GROUP_WRONG"
	case ResponseNoBuyerID:
		return "NO_BUYER_ID"
	case ResponseNotInCurrentUnit:
		return "NOT_IN_CURRENT_UNIT"
	case ResponseConsumerNotOnline:
		return "CONSUMER_NOT_ONLINE"
	case ResponseConsumeMsgTimeout:
		return "CONSUME_MSG_TIMEOUT"
	case ResponseNoMessage:
		return "NO_MESSAGE"
	case ResponsePollingFull:
		return "POLLING_FULL"
	case ResponsePollingTimeout:
		return "POLLING_TIMEOUT"
	case ResponseBrokerNotExist:
		return "BROKER_NOT_EXIST"
	case ResponseFlowControl:
		return "FLOW_CONTROL"
	case ResponseGoAway:
		return "GO_AWAY"
	}
	return "RESPONSE_" + strconv.Itoa(int(code))
}

// Pull request sysFlag bits (Java's PullSysFlag).
const (
	PullSysFlagCommitOffset int32 = 0x1 // the commitOffset field carries an offset to store
	PullSysFlagSuspend      int32 = 0x2 // the broker may hold the pull (long polling)
	PullSysFlagSubscription int32 = 0x4 // use the header's expression, not the heartbeat's
	PullSysFlagClassFilter  int32 = 0x8 // class filter mode (deprecated)
	PullSysFlagLitePull     int32 = 0x10
)

// Permission bits of a topic's queues (Java's PermName).
const (
	PermInherit int32 = 0x1
	PermWrite   int32 = 0x2
	PermRead    int32 = 0x4
)

// IsReadable reports whether perm allows consuming.
func IsReadable(perm int32) bool { return perm&PermRead != 0 }

// IsWritable reports whether perm allows producing.
func IsWritable(perm int32) bool { return perm&PermWrite != 0 }

// VersionV4_9_4 is the first version (MQVersion ordinal) to which a name server answers
// GET_ROUTEINFO_BY_TOPIC in standard JSON (BrowserCompatible).
const VersionV4_9_4 int32 = 401
