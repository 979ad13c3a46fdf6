package group

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/kafka"
)

// JoinGroup is Kafka's handleJoinGroup. It blocks until the rebalance
// completes (or ctx ends) and returns the member's answer.
func (c *Coordinator) JoinGroup(ctx context.Context, req JoinRequest) JoinResult {
	if !validGroupID(req.Group, false) {
		return joinError(req.MemberID, kerr.InvalidGroupID.Code)
	}
	st := time.Duration(req.SessionTimeoutMs) * time.Millisecond
	if st < c.cfg.MinSessionTimeout || st > c.cfg.MaxSessionTimeout {
		return joinError(req.MemberID, kerr.InvalidSessionTimeout.Code)
	}
	if req.RebalanceTimeoutMs <= 0 {
		req.RebalanceTimeoutMs = req.SessionTimeoutMs
	}
	g, code := c.lookup(req.Group, req.MemberID == "")
	if code != 0 {
		return joinError(req.MemberID, code)
	}
	if g == nil {
		return joinError(req.MemberID, kerr.UnknownMemberID.Code)
	}
	return call(ctx, g, func(code int16) JoinResult { return joinError(req.MemberID, code) },
		func(reply chan<- JoinResult) { g.handleJoin(req, reply) })
}

// SyncGroup is Kafka's handleSyncGroup. The leader's call stores the
// assignment; every member's call returns once it is stored.
func (c *Coordinator) SyncGroup(ctx context.Context, req SyncRequest) SyncResult {
	if !validGroupID(req.Group, false) {
		return SyncResult{ErrorCode: kerr.InvalidGroupID.Code}
	}
	g, code := c.lookup(req.Group, false)
	switch {
	case code == kerr.CoordinatorLoadInProgress.Code:
		// The rebalance state is lost; old clients do not expect
		// COORDINATOR_LOAD_IN_PROGRESS here, so they rejoin (as Kafka).
		return SyncResult{ErrorCode: kerr.RebalanceInProgress.Code}
	case code != 0:
		return SyncResult{ErrorCode: code}
	case g == nil:
		return SyncResult{ErrorCode: kerr.UnknownMemberID.Code}
	}
	return call(ctx, g, func(code int16) SyncResult { return SyncResult{ErrorCode: code} },
		func(reply chan<- SyncResult) { g.handleSync(req, reply) })
}

// Heartbeat is Kafka's handleHeartbeat.
func (c *Coordinator) Heartbeat(ctx context.Context, req HeartbeatRequest) int16 {
	if !validGroupID(req.Group, false) {
		return kerr.InvalidGroupID.Code
	}
	g, code := c.lookup(req.Group, false)
	switch {
	case code == kerr.CoordinatorLoadInProgress.Code:
		return 0 // Kafka answers blindly while loading
	case code != 0:
		return code
	case g == nil:
		return kerr.UnknownMemberID.Code
	}
	return call(ctx, g, func(code int16) int16 { return code },
		func(reply chan<- int16) { reply <- g.handleHeartbeat(req) })
}

// LeaveGroup is Kafka's handleLeaveGroup: a top-level code and one code
// per member (v0-v2 callers send one member and use its code).
func (c *Coordinator) LeaveGroup(ctx context.Context, groupID string, members []LeaveMember) (int16, []int16) {
	if !validGroupID(groupID, false) {
		return kerr.InvalidGroupID.Code, nil
	}
	g, code := c.lookup(groupID, false)
	if code != 0 {
		return code, nil
	}
	if g == nil {
		return 0, fillCodes(len(members), kerr.UnknownMemberID.Code)
	}
	type res struct {
		code  int16
		codes []int16
	}
	r := call(ctx, g, func(code int16) res { return res{code: code} },
		func(reply chan<- res) {
			code, codes := g.handleLeave(members)
			reply <- res{code, codes}
		})
	return r.code, r.codes
}

// CommitOffsets is Kafka's handleCommitOffsets; it returns one code per
// req.Offsets entry, after the commit is in the log.
func (c *Coordinator) CommitOffsets(ctx context.Context, req CommitRequest) []int16 {
	n := len(req.Offsets)
	if !validGroupID(req.Group, true) {
		return fillCodes(n, kerr.InvalidGroupID.Code)
	}
	g, code := c.lookup(req.Group, req.Generation < 0)
	if code != 0 {
		return fillCodes(n, code)
	}
	if g == nil {
		// A commit from an older generation of a group that no longer exists.
		return fillCodes(n, kerr.IllegalGeneration.Code)
	}
	return call(ctx, g, func(code int16) []int16 { return fillCodes(n, code) },
		func(reply chan<- []int16) { g.handleCommit(req, reply) })
}

// FetchOffsets is Kafka's handleFetchOffsets: the committed offsets of
// parts (all of the group's when parts is nil). An unknown group has no
// offsets (-1 each), not an error, as clients expect.
func (c *Coordinator) FetchOffsets(ctx context.Context, groupID string, parts []kafka.TopicPartition) (int16, []FetchedOffset) {
	if !validGroupID(groupID, true) {
		return kerr.InvalidGroupID.Code, nil
	}
	g, code := c.lookup(groupID, false)
	if code != 0 {
		return code, nil
	}
	unknown := func() []FetchedOffset {
		if parts == nil {
			return nil
		}
		out := make([]FetchedOffset, len(parts))
		for i, tp := range parts {
			out[i] = noOffset(tp)
		}
		return out
	}
	if g == nil {
		return 0, unknown()
	}
	type res struct {
		code int16
		offs []FetchedOffset
	}
	r := call(ctx, g, func(code int16) res {
		if code == kerr.CoordinatorNotAvailable.Code {
			return res{offs: unknown()} // deleted meanwhile
		}
		return res{code: code}
	}, func(reply chan<- res) { reply <- res{offs: g.handleFetch(parts)} })
	return r.code, r.offs
}

// DescribeGroup is one group of Kafka's handleDescribeGroup; an unknown
// group is described as Dead with no error.
func (c *Coordinator) DescribeGroup(ctx context.Context, groupID string) GroupDescription {
	if !validGroupID(groupID, true) {
		return GroupDescription{Group: groupID, ErrorCode: kerr.InvalidGroupID.Code, State: Dead.String()}
	}
	g, code := c.lookup(groupID, false)
	dead := GroupDescription{Group: groupID, ErrorCode: code, State: Dead.String()}
	if code != 0 || g == nil {
		return dead
	}
	return call(ctx, g, func(code int16) GroupDescription {
		if code == kerr.CoordinatorNotAvailable.Code {
			return dead
		}
		d := dead
		d.ErrorCode = code
		return d
	}, func(reply chan<- GroupDescription) { reply <- g.describe() })
}

// DeleteGroups is Kafka's handleDeleteGroups: one code per id
// (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, coordinator errors, or 0 once the
// tombstones are written).
func (c *Coordinator) DeleteGroups(ctx context.Context, ids []string) []int16 {
	out := make([]int16, len(ids))
	for i, id := range ids {
		out[i] = c.deleteGroup(ctx, id)
	}
	return out
}

func (c *Coordinator) deleteGroup(ctx context.Context, id string) int16 {
	if !validGroupID(id, true) {
		return kerr.InvalidGroupID.Code
	}
	g, code := c.lookup(id, false)
	if code != 0 {
		return code
	}
	if g == nil {
		return kerr.GroupIDNotFound.Code
	}
	return call(ctx, g, func(code int16) int16 {
		if code == kerr.CoordinatorNotAvailable.Code {
			return kerr.GroupIDNotFound.Code
		}
		return code
	}, func(reply chan<- int16) { g.handleDelete(reply) })
}

// DeleteOffsets is Kafka's handleDeleteOffsets (OffsetDelete, KIP-496).
func (c *Coordinator) DeleteOffsets(ctx context.Context, groupID string, parts []kafka.TopicPartition) DeleteOffsetsResult {
	if !validGroupID(groupID, false) {
		return DeleteOffsetsResult{ErrorCode: kerr.InvalidGroupID.Code}
	}
	g, code := c.lookup(groupID, false)
	if code != 0 {
		return DeleteOffsetsResult{ErrorCode: code}
	}
	if g == nil {
		return DeleteOffsetsResult{ErrorCode: kerr.GroupIDNotFound.Code}
	}
	return call(ctx, g, func(code int16) DeleteOffsetsResult {
		if code == kerr.CoordinatorNotAvailable.Code {
			code = kerr.GroupIDNotFound.Code
		}
		return DeleteOffsetsResult{ErrorCode: code}
	}, func(reply chan<- DeleteOffsetsResult) { g.handleDeleteOffsets(parts, reply) })
}
