package protocol

import (
	"errors"
	"slices"
	"strings"
)

// SubAll is the expression that subscribes to every tag.
const SubAll = "*"

// SubscriptionData is one topic subscription of a consumer group (Java's
// SubscriptionData), as carried in heartbeats, running info and CHECK_CLIENT_CONFIG.
type SubscriptionData struct {
	ClassFilterMode bool
	Topic           string
	SubString       string   // the expression: "*", "a || b", or SQL92 text
	TagsSet         []string // the tags of a TAG expression, trimmed, without duplicates
	CodeSet         []int32  // JavaStringHash of each tag, without duplicates
	SubVersion      int64    // ms; the broker keeps the subscription with the larger one
	ExpressionType  string   // ExpressionTypeTag or ExpressionTypeSQL92
}

// BuildSubscription builds a TAG subscription as Java's
// FilterAPI.buildSubscriptionData does: "" or "*" subscribes to everything (SubString
// "*", no tags); otherwise the expression is split on "||", each part trimmed of
// characters up to U+0020, and each non-empty tag added with its Java String.hashCode.
// An expression with no parts at all ("||") is an error, as in Java. SubVersion is left
// 0 for the caller to stamp (Java uses the construction time in ms).
func BuildSubscription(topic, expression string) (SubscriptionData, error) {
	sd := SubscriptionData{Topic: topic, SubString: expression, ExpressionType: ExpressionTypeTag,
		TagsSet: []string{}, CodeSet: []int32{}}
	if expression == "" || expression == SubAll {
		sd.SubString = SubAll
		return sd, nil
	}
	parts := strings.Split(expression, "||")
	for len(parts) > 0 && parts[len(parts)-1] == "" { // Java's split drops trailing empty strings
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return SubscriptionData{}, errors.New("protocol: tag expression " + quote(expression) + " has no tags")
	}
	// Sets keep Java's insertion order; beyond a few tags, maps find duplicates, so an
	// expression of many tags (a peer's, in the fake broker) costs linear time.
	var seenTags map[string]struct{}
	var seenCodes map[int32]struct{}
	if len(parts) > smallTagCount {
		seenTags, seenCodes = make(map[string]struct{}, len(parts)), make(map[int32]struct{}, len(parts))
	}
	for _, part := range parts {
		tag := javaTrim(part)
		if tag == "" || seenBefore(seenTags, sd.TagsSet, tag) {
			continue
		}
		sd.TagsSet = append(sd.TagsSet, tag)
		if code := JavaStringHash(tag); !seenBefore(seenCodes, sd.CodeSet, code) {
			sd.CodeSet = append(sd.CodeSet, code)
		}
	}
	return sd, nil
}

// BuildSubscriptionOfType builds a subscription with the given expression type, as
// Java's FilterAPI.build does: TAG (or "") as BuildSubscription; SQL92 keeps the
// expression as it is, with no tags, and refuses an empty one.
func BuildSubscriptionOfType(topic, expressionType, expression string) (SubscriptionData, error) {
	switch expressionType {
	case "", ExpressionTypeTag:
		return BuildSubscription(topic, expression)
	case ExpressionTypeSQL92:
		if expression == "" {
			return SubscriptionData{}, errors.New("protocol: SQL92 expression for topic " + quote(topic) + " is empty")
		}
		return SubscriptionData{Topic: topic, SubString: expression, ExpressionType: ExpressionTypeSQL92,
			TagsSet: []string{}, CodeSet: []int32{}}, nil
	}
	return SubscriptionData{}, errors.New("protocol: unknown expression type " + quote(expressionType) +
		" (want TAG or SQL92)")
}

// JavaStringHash returns Java's String.hashCode of s: h = 31*h + c over the string's
// UTF-16 code units (a character beyond U+FFFF counts as its two surrogates), with int32
// wraparound. Bytes that are not UTF-8 count as U+FFFD, as Java decodes them.
func JavaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + (0xD800 + r>>10)
			h = 31*h + (0xDC00 + r&0x3FF)
			continue
		}
		h = 31*h + r
	}
	return h
}

// javaTrim trims like Java's String.trim: every character up to U+0020 at both ends.
// Those are single bytes in UTF-8 that never occur inside a multi-byte character.
func javaTrim(s string) string {
	start, end := 0, len(s)
	for start < end && s[start] <= ' ' {
		start++
	}
	for end > start && s[end-1] <= ' ' {
		end--
	}
	return s[start:end]
}

// smallTagCount is how many tags an expression may have for duplicates to be found by
// scanning the list.
const smallTagCount = 16

// seenBefore reports whether v is in list. With seen (for long lists) it looks there
// instead, and records v when it was not.
func seenBefore[T comparable](seen map[T]struct{}, list []T, v T) bool {
	if seen == nil {
		return slices.Contains(list, v)
	}
	if _, ok := seen[v]; ok {
		return true
	}
	seen[v] = struct{}{}
	return false
}

// writeSubscription writes a SubscriptionData with Java's field order.
func writeSubscription(w *Writer, sd *SubscriptionData) {
	w.BeginObject()
	w.Key("classFilterMode")
	w.Bool(sd.ClassFilterMode)
	w.Key("codeSet")
	w.BeginArray()
	for _, c := range sd.CodeSet {
		w.Int(int64(c))
	}
	w.EndArray()
	if sd.ExpressionType != "" {
		w.Key("expressionType")
		w.Str(sd.ExpressionType)
	}
	w.Key("subString")
	w.Str(sd.SubString)
	w.Key("subVersion")
	w.Int(sd.SubVersion)
	w.Key("tagsSet")
	writeStrings(w, sd.TagsSet)
	w.Key("topic")
	w.Str(sd.Topic)
	w.EndObject()
}

// decodeSubscription reads a SubscriptionData.
func decodeSubscription(v Value) (SubscriptionData, error) {
	var sd SubscriptionData
	err := v.Fields(func(field string, f Value) error {
		var err error
		switch field {
		case "classFilterMode":
			sd.ClassFilterMode, err = f.Bool()
		case "topic":
			sd.Topic, err = f.Str()
		case "subString":
			sd.SubString, err = f.Str()
		case "tagsSet":
			sd.TagsSet, err = decodeStrings(f)
		case "codeSet":
			sd.CodeSet, err = decodeInt32s(f)
		case "subVersion":
			sd.SubVersion, err = f.Int64()
		case "expressionType":
			sd.ExpressionType, err = f.Str()
		}
		return at(field, err)
	})
	return sd, err
}

func decodeSubscriptions(v Value) ([]SubscriptionData, error) { return arrayOf(v, decodeSubscription) }

func writeSubscriptions(w *Writer, sds []SubscriptionData) {
	w.BeginArray()
	for i := range sds {
		writeSubscription(w, &sds[i])
	}
	w.EndArray()
}

func quote(s string) string { return truncateQuote(s) }
