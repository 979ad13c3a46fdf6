package zkconsumer

import (
	"fmt"
	"regexp"
	"strings"

	"samsa/zkutil"
)

// Registration patterns (the "pattern" field of /consumers/<g>/ids/<id>).
const (
	patternStatic    = "static"
	patternWhitelist = "white_list"
	patternBlacklist = "black_list"
)

// internalTopics are never matched by a wildcard when
// exclude.internal.topics is on.
var internalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true}

// TopicFilter is a wildcard subscription (Kafka's Whitelist / Blacklist).
// The regex is cleaned as Kafka does: spaces removed, commas turned into
// "|", surrounding quotes dropped; it must match the whole topic name. Go's
// RE2 syntax replaces Java's regex syntax (no back-references or
// look-arounds).
type TopicFilter struct {
	// Regex is the raw pattern, e.g. "logs-.*,metrics".
	Regex string
	// Blacklist inverts the filter: consume every topic that does not match.
	Blacklist bool
}

// Whitelist returns a filter that consumes the topics matching regex.
func Whitelist(regex string) TopicFilter { return TopicFilter{Regex: regex} }

// Blacklist returns a filter that consumes the topics not matching regex.
func Blacklist(regex string) TopicFilter { return TopicFilter{Regex: regex, Blacklist: true} }

// Normalized is the regex after Kafka's clean-up; it is what the
// registration stores.
func (f TopicFilter) Normalized() string {
	r := strings.TrimSpace(f.Regex)
	r = strings.ReplaceAll(r, ",", "|")
	r = strings.ReplaceAll(r, " ", "")
	r = strings.TrimLeft(r, `"'`)
	return strings.TrimRight(r, `"'`)
}

func (f TopicFilter) pattern() string {
	if f.Blacklist {
		return patternBlacklist
	}
	return patternWhitelist
}

// matcher is a compiled TopicFilter.
type matcher struct {
	re              *regexp.Regexp
	blacklist       bool
	excludeInternal bool
}

func (f TopicFilter) compile(excludeInternal bool) (matcher, error) {
	re, err := regexp.Compile("^(?:" + f.Normalized() + ")$")
	if err != nil {
		return matcher{}, fmt.Errorf("zkconsumer: topic filter %q: %w", f.Regex, err)
	}
	return matcher{re: re, blacklist: f.Blacklist, excludeInternal: excludeInternal}, nil
}

func (m matcher) allows(topic string) bool {
	if m.excludeInternal && internalTopics[topic] {
		return false
	}
	return m.re.MatchString(topic) != m.blacklist
}

// subscription is what one member consumes: static topic counts, or a
// filter with a stream count.
type subscription struct {
	static     map[string]int // nil for a wildcard
	filter     TopicFilter
	numStreams int
}

func (s subscription) wildcard() bool { return s.static == nil }

// registration returns the JSON this member writes to its ids znode.
func (s subscription) registration(timestampMs int64) zkutil.ConsumerRegistration {
	if s.wildcard() {
		return zkutil.ConsumerRegistration{
			Subscription: map[string]int32{s.filter.Normalized(): int32(s.numStreams)},
			Pattern:      s.filter.pattern(),
			Timestamp:    timestampMs,
		}
	}
	sub := make(map[string]int32, len(s.static))
	for t, n := range s.static {
		sub[t] = int32(n)
	}
	return zkutil.ConsumerRegistration{Subscription: sub, Pattern: patternStatic, Timestamp: timestampMs}
}

// subscriptionOf reads a member's registration back (Kafka
// TopicCount.constructTopicCount).
func subscriptionOf(reg zkutil.ConsumerRegistration) (subscription, error) {
	switch reg.Pattern {
	case patternStatic:
		static := make(map[string]int, len(reg.Subscription))
		for t, n := range reg.Subscription {
			static[t] = int(n)
		}
		return subscription{static: static}, nil
	case patternWhitelist, patternBlacklist:
		if len(reg.Subscription) != 1 {
			return subscription{}, fmt.Errorf("zkconsumer: wildcard registration has %d patterns, want 1", len(reg.Subscription))
		}
		for re, n := range reg.Subscription {
			return subscription{filter: TopicFilter{Regex: re, Blacklist: reg.Pattern == patternBlacklist}, numStreams: int(n)}, nil
		}
	}
	return subscription{}, fmt.Errorf("zkconsumer: unknown registration pattern %q", reg.Pattern)
}

// resolve returns topic → streams, matching a wildcard against allTopics.
func (s subscription) resolve(allTopics []string, excludeInternal bool) (map[string]int, error) {
	if !s.wildcard() {
		return s.static, nil
	}
	m, err := s.filter.compile(excludeInternal)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int)
	for _, t := range allTopics {
		if m.allows(t) {
			out[t] = s.numStreams
		}
	}
	return out, nil
}
