package fakebroker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
)

// The exported codes are the protocol's.
func TestCodesAreTheProtocols(t *testing.T) {
	for _, c := range []struct{ ours, protocol int32 }{
		{RequestSendMessage, protocol.RequestSendMessage},
		{RequestPullMessage, protocol.RequestPullMessage},
		{RequestQueryConsumerOffset, protocol.RequestQueryConsumerOffset},
		{RequestUpdateConsumerOffset, protocol.RequestUpdateConsumerOffset},
		{RequestUpdateAndCreateTopic, protocol.RequestUpdateAndCreateTopic},
		{RequestSearchOffsetByTimestamp, protocol.RequestSearchOffsetByTimestamp},
		{RequestGetMaxOffset, protocol.RequestGetMaxOffset},
		{RequestGetMinOffset, protocol.RequestGetMinOffset},
		{RequestViewMessageByID, protocol.RequestViewMessageByID},
		{RequestHeartBeat, protocol.RequestHeartBeat},
		{RequestUnregisterClient, protocol.RequestUnregisterClient},
		{RequestConsumerSendMsgBack, protocol.RequestConsumerSendMsgBack},
		{RequestGetConsumerListByGroup, protocol.RequestGetConsumerListByGroup},
		{RequestLockBatchMQ, protocol.RequestLockBatchMQ},
		{RequestUnlockBatchMQ, protocol.RequestUnlockBatchMQ},
		{RequestCheckClientConfig, protocol.RequestCheckClientConfig},
		{RequestGetRouteInfoByTopic, protocol.RequestGetRouteInfoByTopic},
		{RequestGetBrokerClusterInfo, protocol.RequestGetBrokerClusterInfo},
		{RequestInvokeBrokerToResetOffset, protocol.RequestInvokeBrokerToResetOffset},
		{RequestSendMessageV2, protocol.RequestSendMessageV2},
		{RequestSendBatchMessage, protocol.RequestSendBatchMessage},
		{ResponseSystemError, protocol.ResponseSystemError},
		{ResponseSystemBusy, protocol.ResponseSystemBusy},
		{ResponseServiceNotAvailable, protocol.ResponseServiceNotAvailable},
		{ResponseNoPermission, protocol.ResponseNoPermission},
		{ResponseTopicNotExist, protocol.ResponseTopicNotExist},
		{ResponseSubscriptionNotExist, protocol.ResponseSubscriptionNotExist},
		{ResponseSubscriptionNotLatest, protocol.ResponseSubscriptionNotLatest},
		{ResponseSubscriptionParseFailed, protocol.ResponseSubscriptionParseFailed},
		{ResponseFilterDataNotExist, protocol.ResponseFilterDataNotExist},
		{ResponseFilterDataNotLatest, protocol.ResponseFilterDataNotLatest},
		{ResponseSubscriptionGroupNotExist, protocol.ResponseSubscriptionGroupNotExist},
		{ResponseFlowControl, protocol.ResponseFlowControl},
		{RequestQueryAssignment, protocol.RequestQueryAssignment},
		{RequestSetMessageRequestMode, protocol.RequestSetMessageRequestMode},
		{RequestPopMessage, protocol.RequestPopMessage},
		{RequestAckMessage, protocol.RequestAckMessage},
		{RequestChangeMessageInvisibleTime, protocol.RequestChangeMessageInvisibleTime},
		{RequestBatchAckMessage, protocol.RequestBatchAckMessage},
		{ResponsePollingFull, protocol.ResponsePollingFull},
		{ResponsePollingTimeout, protocol.ResponsePollingTimeout},
	} {
		require.Equal(t, c.protocol, c.ours)
	}
}
