package topics

import (
	"errors"
	"reflect"
	"testing"

	"samsa/tools/internal/tool"
)

func TestToolTopicsHelpers(t *testing.T) {
	a, err := parseReplicaAssignment("1:2, 2:3,3:1")
	if err != nil || !reflect.DeepEqual(a, map[int32][]int32{0: {1, 2}, 1: {2, 3}, 2: {3, 1}}) {
		t.Errorf("assignment %v %v", a, err)
	}
	all := []string{"__consumer_offsets", "orders", "orders-dlq", "payments"}
	got, _ := filterTopics(all, &topicOpts{topic: "orders", hasTopic: true})
	if !reflect.DeepEqual(got, []string{"orders"}) {
		t.Errorf("exact: %v", got)
	}
	got, _ = filterTopics(all, &topicOpts{topic: "orders.*,payments", hasTopic: true})
	if !reflect.DeepEqual(got, []string{"orders", "orders-dlq", "payments"}) {
		t.Errorf("regex: %v", got)
	}
	got, _ = filterTopics(all, &topicOpts{excludeInternal: true})
	if len(got) != 3 {
		t.Errorf("exclude internal: %v", got)
	}
	if _, err := filterTopics(all, &topicOpts{topic: "(", hasTopic: true}); err == nil {
		t.Error("bad regex accepted")
	}
	joined := errors.Join(errors.New("config: unknown topic config name: a"), errors.New("config: invalid value \"x\" for configuration b: no"))
	if got := tool.UserMessage(joined); got != "Unknown topic config name: a\ninvalid value \"x\" for configuration b: no" {
		t.Errorf("userMessage: %q", got)
	}
}
