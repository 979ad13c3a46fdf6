package group

import (
	"fmt"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/kafka"
)

// Kafka 2.8's handleDeletedPartitions: the offsets of a deleted topic's
// partitions leave every group (a re-created topic starts without them);
// an Empty group left without offsets is removed; the tombstones survive a
// reload; other offsets and active groups stay.
func TestGroupDeletedPartitionsOffsets(t *testing.T) {
	e := newEnv(t, testConfig())
	ids, gen := e.joinStable("active", "c1")
	codes := e.c.CommitOffsets(bg, CommitRequest{Group: "active", Generation: gen, MemberID: ids[0], RetentionMs: -1,
		Offsets: []CommitOffset{commit(5, "gone", 0), commit(6, "t1", 0)}})
	solo := e.c.CommitOffsets(bg, CommitRequest{Group: "solo", Generation: -1, RetentionMs: -1,
		Offsets: []CommitOffset{commit(7, "gone", 0), commit(8, "gone", 1)}})
	if codes[0] != 0 || codes[1] != 0 || solo[0] != 0 || solo[1] != 0 {
		t.Fatalf("commits = %v %v", codes, solo)
	}
	e.c.HandleDeletedPartitions([]kafka.TopicPartition{tp("gone", 0), tp("gone", 1)})
	testwait.For(t, 10*time.Second, func() error {
		_, offs := e.c.FetchOffsets(bg, "active", []kafka.TopicPartition{tp("gone", 0), tp("t1", 0)})
		if offs[0].Offset != -1 || offs[1].Offset != 6 {
			return fmt.Errorf("active group's offsets = %+v", offs)
		}
		if _, list := e.c.ListGroups(nil); len(list) != 1 || list[0].Group != "active" {
			return fmt.Errorf("groups = %+v", list)
		}
		return nil
	})
	e.restart()
	if _, offs := e.c.FetchOffsets(bg, "active", []kafka.TopicPartition{tp("gone", 0), tp("t1", 0)}); offs[0].Offset != -1 || offs[1].Offset != 6 {
		t.Fatalf("offsets after reload = %+v", offs)
	}
	if _, offs := e.c.FetchOffsets(bg, "solo", []kafka.TopicPartition{tp("gone", 1)}); offs[0].Offset != -1 {
		t.Fatalf("solo group's offsets after reload = %+v", offs)
	}
	if d := e.c.DescribeGroup(bg, "solo"); d.State != "Dead" {
		t.Fatalf("solo group after reload = %+v", d)
	}
}
