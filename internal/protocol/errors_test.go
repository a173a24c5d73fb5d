package protocol

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/remoting"
)

func TestBrokerError(t *testing.T) {
	req := remoting.NewRequest(RequestPullMessage, nil, nil)
	req.Opaque = 7
	resp := remoting.NewResponse(req, ResponseSystemBusy, "remark")
	err := NewBrokerError("127.0.0.1:10911", req, resp)
	require.Equal(t, "broker 127.0.0.1:10911: PULL_MESSAGE (opaque 7): SYSTEM_BUSY (2): remark", err.Error())
	require.Equal(t, &BrokerError{Addr: "127.0.0.1:10911", RequestCode: 11, Code: 2, Remark: "remark", Opaque: 7}, err)

	wrapped := fmt.Errorf("pull: %w", err)
	require.ErrorIs(t, wrapped, ResponseCodeError(ResponseSystemBusy))
	require.NotErrorIs(t, wrapped, ResponseCodeError(ResponseFlowControl))
	require.ErrorIs(t, wrapped, &BrokerError{Code: ResponseSystemBusy})
	require.NotErrorIs(t, wrapped, (*BrokerError)(nil))
	var be *BrokerError
	require.True(t, errors.As(wrapped, &be))
	require.Equal(t, int32(7), be.Opaque)

	require.Equal(t, "SYSTEM_BUSY (2)", ResponseCodeError(2).Error())
	require.Equal(t, "RESPONSE_999 (999)", ResponseCodeError(999).Error())

	noRemark := NewBrokerError("ns:9876", &remoting.Command{Code: RequestGetRouteInfoByTopic, Opaque: 3},
		&remoting.Command{Code: ResponseTopicNotExist})
	require.Equal(t, "broker ns:9876: GET_ROUTEINFO_BY_TOPIC (opaque 3): TOPIC_NOT_EXIST (17)", noRemark.Error())
	onlyResp := NewBrokerError("a", nil, &remoting.Command{Code: 1, Opaque: 9})
	require.Equal(t, int32(9), onlyResp.Opaque)
}

func TestGoldenTopicNotExist(t *testing.T) {
	frames := loadGolden(t)
	f := goldenFrameByFile(t, frames, "b_consume_retry", "0004-")
	require.Equal(t, ResponseTopicNotExist, f.Code)
	resp := &remoting.Command{Code: f.Code, Opaque: f.Opaque, Remark: *f.Remark, Flag: remoting.FlagResponse}
	err := NewBrokerError("127.0.0.1:9876", &remoting.Command{Code: f.RequestCode, Opaque: f.Opaque}, resp)
	require.ErrorIs(t, err, ResponseCodeError(ResponseTopicNotExist))
	require.Contains(t, err.Error(), "GET_ROUTEINFO_BY_TOPIC (opaque ")
	require.Contains(t, err.Error(), "TOPIC_NOT_EXIST (17): No topic route info in name server for the topic")
}

func TestCodeNames(t *testing.T) {
	for code, name := range map[int32]string{
		10: "SEND_MESSAGE", 11: "PULL_MESSAGE", 17: "UPDATE_AND_CREATE_TOPIC", 33: "VIEW_MESSAGE_BY_ID",
		34: "HEART_BEAT", 40: "NOTIFY_CONSUMER_IDS_CHANGED", 46: "CHECK_CLIENT_CONFIG", 105: "GET_ROUTEINFO_BY_TOPIC",
		106: "GET_BROKER_CLUSTER_INFO", 203: "GET_CONSUMER_CONNECTION_LIST", 208: "GET_CONSUME_STATS",
		220: "RESET_CONSUMER_CLIENT_OFFSET", 222: "INVOKE_BROKER_TO_RESET_OFFSET",
		223: "INVOKE_BROKER_TO_GET_CONSUMER_STATUS", 307: "GET_CONSUMER_RUNNING_INFO", 309: "CONSUME_MESSAGE_DIRECTLY",
		310: "SEND_MESSAGE_V2", 320: "SEND_BATCH_MESSAGE", 12345: "REQUEST_12345",
	} {
		require.Equal(t, name, RequestName(code))
	}
	for code, name := range map[int32]string{
		0: "SUCCESS", 1: "SYSTEM_ERROR", 2: "SYSTEM_BUSY", 3: "REQUEST_CODE_NOT_SUPPORTED", 17: "TOPIC_NOT_EXIST",
		19: "PULL_NOT_FOUND", 20: "PULL_RETRY_IMMEDIATELY", 21: "PULL_OFFSET_MOVED", 22: "QUERY_NOT_FOUND",
		25: "SUBSCRIPTION_NOT_LATEST", 206: "CONSUMER_NOT_ONLINE", 215: "FLOW_CONTROL", -1: "RESPONSE_-1",
	} {
		require.Equal(t, name, ResponseName(code))
	}
	// The golden captures name every code they hold the way this package does.
	for _, f := range loadGolden(t) {
		if f.Kind == "response" {
			require.Equal(t, f.CodeName, ResponseName(f.Code), f.File)
			require.Equal(t, f.RequestName, RequestName(f.RequestCode), f.File)
		} else {
			require.Equal(t, f.CodeName, RequestName(f.Code), f.File)
		}
	}
	require.True(t, IsReadable(6) && IsWritable(6) && !IsReadable(PermWrite) && !IsWritable(PermRead))
	var cmd remoting.Command
	cmd.Code = RequestPullMessage // assignable without a conversion
	require.Equal(t, int32(11), cmd.Code)
}
