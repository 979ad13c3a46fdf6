package broker

import (
	"context"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/principal"
	"samsa/broker/quota"
	"samsa/broker/wire"
)

// request is what a handler sees of one request.
type request struct {
	// ctx ends when the connection closes or the broker shuts down; a
	// handler that parks (acks=all produce, long-poll fetch) must honour it.
	ctx      context.Context
	hdr      *wire.Header
	body     kmsg.Request
	listener string // name of the listener the request arrived on
	// principal is who the connection authenticated as (User:ANONYMOUS on PLAINTEXT).
	principal principal.Principal
	// clientHost is the peer's address as Kafka reports it in group
	// descriptions ("/127.0.0.1").
	clientHost string
	// heldBytesOut, when non-nil, collects a consumer fetch's BytesOutPerSec marks instead of
	// marking them: the quota layer marks them only if the answer is sent (a throttled fetch
	// is answered empty, and Kafka counts the bytes of the response it sends).
	heldBytesOut *[]topicBytes
	// parked is the time the handler waited (park), which the request's
	// handler time leaves out (quota_request.go, server.Conn.Parked).
	parked time.Duration
	// denied: an inter-broker request refused for want of ClusterAction
	// (throttled like a client's, not exempt).
	denied bool
	// mutation is the controller_mutation_rate quota of CreateTopics,
	// CreatePartitions and DeleteTopics; nil: unbounded (quota_mutation.go).
	mutation *quota.Mutation
}

// topicBytes is one partition's fetched size, for the held BytesOutPerSec marks.
type topicBytes struct {
	topic string
	size  int64
}

// handlerFunc answers one request. A nil response with a nil error means
// "send nothing" (Produce with acks=0). A non-nil error closes the connection;
// handlers return it only where Kafka also closes (STYLE S5.5).
type handlerFunc func(b *Broker, r *request) (kmsg.Response, error)

// api is one row of the version table.
type api struct {
	key      int16
	min, max int16
	handle   handlerFunc
	// controllerOnly: answered only by the active controller (NOT_CONTROLLER
	// elsewhere). Kafka 2.8 forwards none of these in ZooKeeper mode.
	controllerOnly bool
	// interBroker: sent by the controller or by other brokers, never by
	// clients; still listed in ApiVersions, as Kafka does.
	interBroker bool
	// brokerMax, when above max, is the highest version accepted from
	// other brokers but not advertised in ApiVersions (AddPartitionsToTxn
	// v4, KIP-890's verify-only check, above Kafka 2.8's client range).
	brokerMax int16
}

// newAPITable returns THE table of supported APIs and versions (STYLE S2.3).
// Every row's range matches its NN_<api>.go header (TestAPITableMatchesFiles),
// and ApiVersions answers from it. Ranges are Kafka 2.8's unless the file
// header says why not.
func newAPITable() map[int16]api {
	rows := []api{
		{key: 0, min: 0, max: 9, handle: (*Broker).handleProduce},
		{key: 1, min: 0, max: 12, handle: (*Broker).handleFetch},
		{key: 2, min: 0, max: 6, handle: (*Broker).handleListOffsets},
		{key: 3, min: 0, max: 11, handle: (*Broker).handleMetadata},
		{key: 4, min: 0, max: 5, handle: (*Broker).handleLeaderAndISR, interBroker: true},
		{key: 5, min: 0, max: 3, handle: (*Broker).handleStopReplica, interBroker: true},
		{key: 6, min: 0, max: 7, handle: (*Broker).handleUpdateMetadata, interBroker: true},
		{key: 7, min: 0, max: 3, handle: (*Broker).handleControlledShutdown, controllerOnly: true, interBroker: true},
		{key: 8, min: 0, max: 8, handle: (*Broker).handleOffsetCommit},
		{key: 9, min: 0, max: 7, handle: (*Broker).handleOffsetFetchAuthorized},
		{key: 10, min: 0, max: 3, handle: (*Broker).handleFindCoordinatorAuthorized},
		{key: 11, min: 0, max: 7, handle: (*Broker).handleJoinGroup},
		{key: 12, min: 0, max: 4, handle: (*Broker).handleHeartbeat},
		{key: 13, min: 0, max: 4, handle: (*Broker).handleLeaveGroup},
		{key: 14, min: 0, max: 5, handle: (*Broker).handleSyncGroup},
		{key: 15, min: 0, max: 5, handle: (*Broker).handleDescribeGroups},
		{key: 16, min: 0, max: 4, handle: (*Broker).handleListGroups},
		{key: 17, min: 0, max: 1, handle: (*Broker).handleSASLHandshake},
		{key: 18, min: 0, max: 3, handle: (*Broker).handleApiVersions},
		{key: 19, min: 0, max: 6, handle: (*Broker).handleCreateTopics, controllerOnly: true},
		{key: 20, min: 0, max: 5, handle: (*Broker).handleDeleteTopics, controllerOnly: true},
		{key: 21, min: 0, max: 2, handle: (*Broker).handleDeleteRecords},
		{key: 22, min: 0, max: 4, handle: (*Broker).handleInitProducerIDAuthorized},
		{key: 23, min: 0, max: 4, handle: (*Broker).handleOffsetForLeaderEpoch},
		{key: 24, min: 0, max: 3, brokerMax: 4, handle: (*Broker).handleAddPartitionsToTxn},
		{key: 25, min: 0, max: 3, handle: (*Broker).handleAddOffsetsToTxn},
		{key: 26, min: 0, max: 3, handle: (*Broker).handleEndTxn},
		{key: 27, min: 0, max: 1, handle: (*Broker).handleWriteTxnMarkers, interBroker: true},
		{key: 28, min: 0, max: 3, handle: (*Broker).handleTxnOffsetCommit},
		{key: 29, min: 0, max: 2, handle: (*Broker).handleDescribeAcls},
		{key: 30, min: 0, max: 2, handle: (*Broker).handleCreateAcls},
		{key: 31, min: 0, max: 2, handle: (*Broker).handleDeleteAcls},
		{key: 32, min: 0, max: 4, handle: (*Broker).handleDescribeConfigs},
		{key: 33, min: 0, max: 2, handle: (*Broker).handleAlterConfigs},
		{key: 35, min: 0, max: 2, handle: (*Broker).handleDescribeLogDirs},
		{key: 36, min: 0, max: 2, handle: (*Broker).handleSASLAuthenticate},
		{key: 37, min: 0, max: 3, handle: (*Broker).handleCreatePartitions, controllerOnly: true},
		{key: 42, min: 0, max: 2, handle: (*Broker).handleDeleteGroups},
		{key: 43, min: 0, max: 2, handle: (*Broker).handleElectLeaders, controllerOnly: true},
		{key: 44, min: 0, max: 1, handle: (*Broker).handleIncrementalAlterConfigs},
		{key: 45, min: 0, max: 0, handle: (*Broker).handleAlterPartitionReassignments, controllerOnly: true},
		{key: 46, min: 0, max: 0, handle: (*Broker).handleListPartitionReassignments, controllerOnly: true},
		{key: 47, min: 0, max: 0, handle: (*Broker).handleOffsetDelete},
		{key: 48, min: 0, max: 1, handle: (*Broker).handleDescribeClientQuotas},
		{key: 49, min: 0, max: 1, handle: (*Broker).handleAlterClientQuotas},
		{key: 50, min: 0, max: 0, handle: (*Broker).handleDescribeUserSCRAMCredentials},
		{key: 51, min: 0, max: 0, handle: (*Broker).handleAlterUserSCRAMCredentials, controllerOnly: true},
		{key: 60, min: 0, max: 0, handle: (*Broker).handleDescribeCluster},
		{key: 61, min: 0, max: 0, handle: (*Broker).handleDescribeProducers},
		{key: 65, min: 0, max: 0, handle: (*Broker).handleDescribeTransactions},
		{key: 66, min: 0, max: 0, handle: (*Broker).handleListTransactions},
	}
	t := make(map[int16]api, len(rows))
	for _, r := range rows {
		if _, dup := t[r.key]; dup {
			panic("broker: api key listed twice in apis.go") // a programming error, caught by every test
		}
		t[r.key] = r
	}
	return t
}

// sortedAPIKeys returns the table's keys in ascending order.
func sortedAPIKeys(t map[int16]api) []int16 {
	keys := make([]int16, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
