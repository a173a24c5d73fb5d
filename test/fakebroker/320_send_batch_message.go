package fakebroker

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// SEND_BATCH_MESSAGE (320); 4.9.8's SendMessageProcessor.sendBatchMessage with
// CommitLog.putMessages and MessageExtBatchEncoder.
//
// Supported: the checks of a single send (msgCheck), then MESSAGE_ILLEGAL for a %RETRY%
// topic; every entry of the client batch body becomes one message of the same queue,
// with consecutive queue offsets, the header's sysFlag and born timestamp, the entry's
// flag and body, and the entry's properties kept byte for byte with CLUSTER appended
// (after a 0x02 when the entry's properties do not end with one): 4.9.8 does not rewrite
// batch properties, nor add UNIQ_KEY. The answer's msgId is the entries' offsetMsgIds
// joined by commas, queueOffset the first entry's.
//
// Left out: a batch with a DELAY is stored without delay (4.9.8 refuses a delayed batch
// from its header's properties, which clients leave empty). A body that is not a valid
// client batch, or is empty, gets MESSAGE_ILLEGAL; the batch's total size is limited by
// the max message size.
func (b *Broker) sendBatchMessage(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.SendMessageRequest
	if err := h.DecodeFor(req.Code, req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	if len(req.Body) > b.cfg.maxMessageSize {
		return newResponse(req, protocol.ResponseMessageIllegal, remarkMessageIllegal)
	}
	entries, err := message.DecodeBatch(req.Body)
	if err != nil || len(entries) == 0 {
		return newResponse(req, protocol.ResponseMessageIllegal, remarkMessageIllegal)
	}
	bornHost := remoteAddrPort(sc)
	b.mu.Lock()
	t, resp := b.msgCheck(sc, req, &h)
	if resp != nil {
		b.mu.Unlock()
		return resp
	}
	if len(h.Topic) > 127 {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseMessageIllegal, "message topic length too long "+strconv.Itoa(len(h.Topic)))
	}
	if strings.HasPrefix(h.Topic, retryPrefix) {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseMessageIllegal, "batch request does not support retry group "+h.Topic)
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = rand.Int32N(max(t.write, 1))
	}
	cluster := propCluster + "\x01" + b.cfg.clusterName
	props := make([]string, len(entries))
	for i, e := range entries {
		raw := e.Properties.String()
		switch {
		case raw == "":
			props[i] = cluster
		case raw[len(raw)-1] == '\x02':
			props[i] = raw + cluster
		default:
			props[i] = raw + "\x02" + cluster
		}
		// Refuse the whole batch before storing any of it, as putMessages does.
		if len(props[i]) > message.MaxPropertiesLength ||
			len(e.Body)+len(props[i])+len(h.Topic)+128 > b.cfg.maxMessageSize {
			b.mu.Unlock()
			return newResponse(req, protocol.ResponseMessageIllegal, remarkMessageIllegal)
		}
	}
	ids := make([]string, 0, len(entries))
	var first int64
	var wake []*heldPull
	for i, e := range entries {
		jp := parseJProps(props[i])
		jp.del(propDelay) // the batch path never delays an entry
		in := &inner{
			topic:    h.Topic,
			queueID:  queueID,
			body:     e.Body,
			flag:     e.Flag,
			props:    jp,
			propsStr: props[i],
			sysFlag:  h.SysFlag,
			bornTs:   h.BornTimestamp,
			bornHost: bornHost,
		}
		res, w, err := b.putMessage(in)
		if err != nil {
			b.mu.Unlock()
			b.answerHeld(wake)
			return putError(req, err)
		}
		if i == 0 {
			first = res.queueOffset
		}
		ids = append(ids, res.msgID)
		wake = append(wake, w...)
	}
	b.mu.Unlock()
	b.answerHeld(wake)
	resp = newResponse(req, protocol.ResponseSuccess, "")
	hdr := protocol.SendMessageResponse{
		MsgID:       strings.Join(ids, ","),
		QueueID:     queueID,
		QueueOffset: first,
		MsgRegion:   "DefaultRegion",
		TraceOn:     protocol.Some(true),
	}
	resp.ExtFields = hdr.Encode()
	return resp
}
