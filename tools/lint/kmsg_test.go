package lint

import (
	"go/ast"
	"path"
	"strconv"
	"strings"
	"testing"
)

const kmsgPath = "github.com/twmb/franz-go/pkg/kmsg"

// kmsgUse is one place allowed to import kmsg (STYLE S1.2, S1.3: kmsg request and response
// types stop at the handler). pattern is a path.Match pattern over the file's path from the
// repository root. schemaOnly entries may use kmsg's record schemas (the __consumer_offsets and
// __transaction_state key/value types kmsg generates from Kafka's JSON) but no Request or
// Response type: a domain package that needs one should take plain Go values instead.
type kmsgUse struct {
	pattern    string
	schemaOnly bool
	why        string
}

// kmsgUses is the whole reach of kmsg in non-test code; test files (clients of the protocol)
// are not limited. An import outside it fails, and so does an entry no file uses, so the
// table stays exact. docs/design.md ("Where kmsg reaches") repeats it.
var kmsgUses = []kmsgUse{
	// The places issue 19 names.
	{pattern: "broker/[0-9][0-9]_*.go", why: "the NN_<api>.go handlers translate request -> domain call -> response"},
	{pattern: "broker/wire/*.go", why: "framing, headers and the kmsg glue (request decode, response encode, splice)"},
	{pattern: "peer/*.go", why: "the inter-broker client sends kmsg requests and reads their responses"},
	{pattern: "controller/channel*.go", why: "the controller channel builds LeaderAndIsr, UpdateMetadata and StopReplica"},
	{pattern: "broker/txn_wiring.go", why: "the marker channel: WriteTxnMarkers from the transaction coordinator to partition leaders"},
	{pattern: "broker/txn_verify.go", why: "the KIP-890 verification channel: AddPartitionsToTxn to the transaction coordinator"},
	{pattern: "broker/replica/remote/fetch_source.go", why: "the fetch channel: replica.FetchSource over peer (Fetch, ListOffsets, OffsetForLeaderEpoch)"},
	// Dispatch, next to the handlers.
	{pattern: "broker/server/*.go", why: "the connection loop hands each decoded kmsg request to the Handler and writes its response (STYLE S1.2)"},
	{pattern: "broker/apis.go", why: "the API table: key -> handler over kmsg.Request/kmsg.Response"},
	{pattern: "broker/handler.go", why: "server.Handler adapter: table check, fault intercept, per-request log line"},
	{pattern: "broker/options.go", why: "Options.Intercept, the fault hook, is typed by kmsg.Request/kmsg.Response"},
	{pattern: "broker/brokertest/cluster.go", why: "the test harness's Intercept passes the same hook through"},
	{pattern: "broker/brokertest/rawconn.go", why: "the test harness's RawConn sends kmsg requests for protocol-level tests (brokertest is test-only)"},
	{pattern: "broker/brokertest/requests.go", why: "the test harness's request builders for protocol-level tests (brokertest is test-only)"},
	// Handler parts kept in their own files (each is part of the handlers named in its header).
	{pattern: "broker/authz*.go", why: "per-request authorization of the handlers (Produce's transactional batches, Metadata's filtering, config resource types, inter-broker ClusterAction)"},
	{pattern: "broker/configs.go", why: "DescribeConfigs/AlterConfigs entries and config sources shared by handlers 32, 33 and 44"},
	{pattern: "broker/dynamic_broker_config.go", why: "broker resources of AlterConfigs (33) and IncrementalAlterConfigs (44)"},
	{pattern: "broker/broker_logger.go", why: "BROKER_LOGGER resources of DescribeConfigs (32) and IncrementalAlterConfigs (44)"},
	{pattern: "broker/fetch_session.go", why: "Fetch's KIP-227 session glue between 01_fetch.go's kmsg values and broker/fetchsession"},
	{pattern: "broker/fetch_txn.go", why: "Fetch's read_committed answer (aborted transactions in the response)"},
	{pattern: "broker/quota_serve.go", why: "client quotas at dispatch: Produce/Fetch byte rates, the combined throttle of every request (issue 16)"},
	{pattern: "broker/quota_request.go", why: "request_percentage: which requests are exempt (follower Fetch) and the network-time hook"},
	{pattern: "broker/quota_mutation.go", why: "controller_mutation_rate: the strict-since versions of CreateTopics, CreatePartitions, DeleteTopics"},
	{pattern: "broker/quota/throttle/*.go", why: "throttle_time_ms on any response, the empty throttled Fetch, Fetch max_bytes capping, response sizes"},
	{pattern: "broker/reassign_log_end.go", why: "AlterPartitionReassignments' Samsa tag (handler 45's log-end part)"},
	// Record schemas, not requests.
	{pattern: "broker/txn/codec.go", schemaOnly: true, why: "__transaction_state keys and values with kmsg's TxnMetadataKey/TxnMetadataValue (Kafka's own schemas)"},
	// Clients outside the broker.
	{pattern: "chaos/workload/queue.go", why: "kgo's CommitOffsetsSync callback is typed by kmsg.OffsetCommitRequest/Response"},
	{pattern: "tools/bench/cluster.go", why: "the benchmark creates and deletes its topics with raw Admin requests through kgo"},
	{pattern: "tools/reassign/leader_election.go", why: "kafka-leader-election builds its ElectLeaders request (kgo carries it to the controller)"},
	{pattern: "tools/reassign/reassign_admin.go", why: "kafka-reassign-partitions' Admin API requests, carried by a kgo client"},
	{pattern: "tools/reassign/reassign_backend.go", why: "kafka-reassign-partitions' Alter/ListPartitionReassignments requests (kadm cannot carry the Samsa log-end tag), carried by kgo"},
	{pattern: "tools/replicaverify/replica_verification_fetch.go", why: "kafka-replica-verification fetches as a replica would (raw Fetch)"},
	{pattern: "tools/txn/transactions_abort.go", why: "kafka-transactions abort writes the ABORT marker with WriteTxnMarkers (Sarama lacks it), carried by kgo"},
}

// TestLintKmsgReach enforces kmsg's reach: only the files of kmsgUses import it, schema-only
// files use no Request or Response type, and every entry is still used.
func TestLintKmsgReach(t *testing.T) {
	used := make([]bool, len(kmsgUses))
	for _, f := range parseRepo(t) {
		if f.test {
			continue
		}
		name := kmsgImportName(f.ast)
		if name == "" {
			continue
		}
		rel := strings.ReplaceAll(f.rel, "\\", "/")
		i := matchKmsgUse(rel)
		if i < 0 {
			t.Errorf("%s imports kmsg, which stops at the handlers (STYLE S1.2, S1.3): take plain Go values instead, or add the file with its reason to kmsgUses (tools/lint/kmsg_test.go) and docs/design.md", rel)
			continue
		}
		used[i] = true
		if kmsgUses[i].schemaOnly {
			for _, sel := range kmsgSelectors(f.ast, name) {
				if strings.Contains(sel, "Request") || strings.Contains(sel, "Response") {
					t.Errorf("%s uses kmsg.%s: this file may use kmsg's record schemas only", rel, sel)
				}
			}
		}
	}
	for i, u := range kmsgUses {
		if !used[i] {
			t.Errorf("kmsgUses entry %q matches no file importing kmsg: remove it", u.pattern)
		}
	}
}

func matchKmsgUse(rel string) int {
	for i, u := range kmsgUses {
		if ok, _ := path.Match(u.pattern, rel); ok {
			return i
		}
	}
	return -1
}

// kmsgImportName returns the name kmsg is imported under in f, or "" when it is not imported.
func kmsgImportName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == kmsgPath {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "kmsg"
		}
	}
	return ""
}

// kmsgSelectors returns every name used as <name>.X in f.
func kmsgSelectors(f *ast.File, name string) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
				out = append(out, sel.Sel.Name)
			}
		}
		return true
	})
	return out
}
