package fakebroker

import (
	"errors"
	"strings"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// faqSuffix is what Java's FAQUrl.suggestTodo appends to many remarks (every FAQ URL of
// 4.9.8 is this one).
const faqSuffix = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."

// Remarks of the common answers, as 4.9.8 writes them.
const (
	remarkSubNotLatest      = "the consumer's subscription not latest"
	remarkGroupInfoNotExist = "the consumer's group info not exist" + faqSuffix
	remarkSubNotExist       = "the consumer's subscription not exist" + faqSuffix
	remarkSubParseFailed    = "parse the consumer's subscription failed"
	// Filter data (SQL92 subscriptions).
	remarkFilterDataNotExist  = "The broker's consumer filter data is not exist!Your expression may be wrong!"
	remarkFilterDataNotLatest = "the consumer's consumer filter data not latest"
	remarkNoPropertyFilter    = "The broker does not support consumer to filter message by " // + the expression type
	remarkMessageIllegal      = "the message is illegal, maybe msg body or properties length not matched. msg body length limit 128k, msg properties length limit 32k."
)

// exceptionRemark renders err as Java's RemotingHelper.exceptionSimpleDesc would render
// the exception 4.9.8 meets for the same input: the exception class and its message.
func exceptionRemark(err error) string {
	var he *protocol.HeaderError
	if errors.As(err, &he) {
		field := he.Field
		if i := strings.LastIndexByte(field, '/'); i >= 0 && he.Missing {
			field = field[:i] // "a/producerGroup": Java names the short field
		}
		if he.Missing {
			return "org.apache.rocketmq.remoting.exception.RemotingCommandException: the custom field <" +
				field + "> is null"
		}
		return "java.lang.NumberFormatException: For input string: \"" + he.Value + "\" (field <" + field + ">)"
	}
	return "java.lang.IllegalArgumentException: " + err.Error()
}

// bodyRemark renders a body that does not decode as the fastjson exception 4.9.8 meets.
func bodyRemark(err error) string {
	return "com.alibaba.fastjson.JSONException: " + err.Error()
}

// badBody answers a request whose JSON body cannot be read: SYSTEM_ERROR in JSON, as
// 4.9.8's catch-all answers the fastjson exception.
func badBody(sc conn, req *remoting.Command, err error) *remoting.Command {
	resp := newResponse(req, protocol.ResponseSystemError, bodyRemark(err))
	resp.Serialize = remoting.SerializeJSON
	return reply(sc, req, resp)
}
