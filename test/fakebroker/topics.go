package fakebroker

import (
	"strings"

	"github.com/rmqpush/rmqpush/internal/protocol"
)

// Topic names with a meaning to the broker.
const (
	autoCreateTopic = "TBW102"              // TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC
	scheduleTopic   = "SCHEDULE_TOPIC_XXXX" // where delayed messages wait
	retryPrefix     = "%RETRY%"
	dlqPrefix       = "%DLQ%"
)

// maxTopics bounds the topics one broker holds, so that clients sending to ever new
// topic names (or heartbeating ever new groups) cannot grow it without limit.
const maxTopics = 1 << 16

// notAllowedSendTopic is 4.9.8's TopicValidator.isNotAllowedSendTopic.
func notAllowedSendTopic(topic string) bool {
	switch topic {
	case scheduleTopic, "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC",
		"TRANS_CHECK_MAX_TIME_TOPIC", "SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT":
		return true
	}
	return false
}

// validateTopic is 4.9.8's TopicValidator.validateTopic: the remark to answer with
// SYSTEM_ERROR, or "".
func validateTopic(topic string) string {
	switch {
	case strings.TrimSpace(topic) == "":
		return "The specified topic is blank."
	case !validName(topic):
		return "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
	case len(topic) > 127:
		return "The specified topic is longer than topic max length."
	}
	return ""
}

// CreateTopic creates topic on this broker with the given queue count (0 to 1024) and
// permission bits (PermRead, PermWrite, PermInherit), or changes them if it exists (its
// messages stay), as UPDATE_AND_CREATE_TOPIC does. A queue count beyond 1024 is clamped.
func (b *Broker) CreateTopic(topic string, queues int, perm int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := int32(min(max(queues, 0), maxQueueNums))
	b.setTopicLocked(topic, n, n, perm)
}

// setTopicLocked creates or updates a topic, keeping the queues (and their messages) it
// already has.
func (b *Broker) setTopicLocked(topic string, read, write, perm int32) *topicConfig {
	t := b.topics[topic]
	if t == nil {
		t = newTopicConfig(topic, read, write, perm, 0)
		b.topics[topic] = t
		return t
	}
	t.read, t.write, t.perm = read, write, perm
	for int32(len(t.queues)) < max(read, write) {
		t.queues = append(t.queues, &consumeQueue{topic: topic, id: int32(len(t.queues))})
	}
	return t
}

// createTopicInSendMessage is TopicConfigManager.createTopicInSendMessageMethod: a topic
// a producer sends to for the first time is created from its default topic (TBW102) if
// that one may be inherited, with min(clientQueueNums, default's write queues) queues and
// the default's permission minus inherit. It returns nil when it may not.
func (b *Broker) createTopicInSendMessage(topic, defaultTopic string, clientQueueNums, sysFlag int32) *topicConfig {
	if t := b.topics[topic]; t != nil {
		return t
	}
	def := b.topics[defaultTopic]
	if def == nil || def.perm&permInherit == 0 || len(b.topics) >= maxTopics {
		return nil
	}
	n := max(min(clientQueueNums, def.write), 0)
	t := newTopicConfig(topic, n, n, def.perm&^permInherit, sysFlag)
	b.topics[topic] = t
	return t
}

// createTopicInSendMessageBack is TopicConfigManager.createTopicInSendMessageBackMethod:
// the retry and dead-letter topics are created on first use. It returns nil only when the
// broker holds too many topics.
func (b *Broker) createTopicInSendMessageBack(topic string, queues, perm, sysFlag int32) *topicConfig {
	if t := b.topics[topic]; t != nil {
		return t
	}
	if len(b.topics) >= maxTopics {
		return nil
	}
	t := newTopicConfig(topic, queues, queues, perm, sysFlag)
	b.topics[topic] = t
	return t
}

// topicSysFlag is TopicSysFlag.buildSysFlag for the unit mode of a request.
func topicSysFlag(unit, unitSub bool) int32 {
	var f int32
	if unit {
		f |= 0x1
	}
	if unitSub {
		f |= 0x2
	}
	return f
}

// tagsCode is MessageExtBrokerInner.tagsString2tagsCode for a SINGLE_TAG topic: the
// tags' Java hash code, 0 without tags.
func tagsCode(tags string) int32 {
	if tags == "" {
		return 0
	}
	return protocol.JavaStringHash(tags)
}
