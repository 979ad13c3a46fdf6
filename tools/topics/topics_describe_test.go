package topics

import (
	"bytes"
	"testing"

	"samsa/tools/internal/tooltest"
)

// describeFixture is a fixed cluster: brokers 1 and 2 alive, 3 dead.
func describeFixture() []topicInfo {
	return []topicInfo{
		{
			Name: "orders", TopicID: "2uQ9x0Q5RrW0mJkP0kH3Nw", MinISR: 2,
			Configs: []configKV{{"cleanup.policy", "compact"}, {"segment.bytes", "1048576"}},
			Partitions: []partInfo{
				{ID: 0, Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
				{ID: 1, Leader: 2, Replicas: []int32{2, 3}, ISR: []int32{2}},
				{ID: 2, Leader: -1, Replicas: []int32{3, 1}, ISR: []int32{3}},
			},
		},
		{
			Name: "plain", MinISR: 1,
			Partitions: []partInfo{
				{ID: 0, Leader: 3, Replicas: []int32{3}, ISR: []int32{3}},
				{ID: 1, Leader: 1, Replicas: []int32{1, 2, 4}, ISR: []int32{1, 2, 4}, Reassigning: true, Adding: []int32{4}, Removing: []int32{}},
			},
		},
		{
			Name: "doomed", MarkedForDeletion: true,
			Partitions: []partInfo{{ID: 0, Leader: -1, Replicas: []int32{1}, ISR: []int32{}}},
		},
	}
}

func TestToolTopicsDescribeGolden(t *testing.T) {
	live := map[int32]bool{1: true, 2: true}
	modes := []struct {
		name string
		opts topicOpts
	}{
		{"describe", topicOpts{}},
		{"describe_under_replicated", topicOpts{underReplicated: true}},
		{"describe_unavailable", topicOpts{unavailable: true}},
		{"describe_under_min_isr", topicOpts{underMinISR: true}},
		{"describe_at_min_isr", topicOpts{atMinISR: true}},
		{"describe_topics_with_overrides", topicOpts{withOverrides: true}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			var buf bytes.Buffer
			d := newDescribeOpts(&m.opts, live)
			for _, ti := range describeFixture() {
				writeTopicDescription(&buf, ti, d)
			}
			tooltest.CheckGolden(t, m.name, buf.Bytes())
		})
	}
}
