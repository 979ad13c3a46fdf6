package groups

// Client of the brokers' rebalance records (Samsa): the metrics listener
// (metrics.listener=http://host:port) serves them as JSON at
// /groups/rebalances (broker/group_rebalances_http.go, docs/groups.md).
// kafka-consumer-groups --describe --state --verbose and samsa-doctor take
// the brokers' metrics URLs with --metrics-url; Kafka's wire has no place
// for the records and stays as Kafka's.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"samsa/tools/internal/tool"
)

// RebalancesPath is broker.GroupRebalancesPath.
const RebalancesPath = "/groups/rebalances"

// maxRebalancesDoc bounds the document read from one broker.
const maxRebalancesDoc = 16 << 20

type RebalancesDoc struct {
	Broker int32            `json:"broker"`
	Groups []RebalanceGroup `json:"groups"`
}

type RebalanceGroup struct {
	Group      string           `json:"group"`
	State      string           `json:"state"`
	Counts     map[string]int64 `json:"counts"`
	Rebalances []rebalanceEntry `json:"rebalances"`
	Storm      *rebalanceStorm  `json:"storm"`
}

type rebalanceEntry struct {
	Time       time.Time `json:"time"`
	Generation int32     `json:"generation"`
	Reason     string    `json:"reason"`
	MemberID   string    `json:"member_id"`
	ClientID   string    `json:"client_id"`
	ClientHost string    `json:"client_host"`
	Detail     string    `json:"detail"`
}

type rebalanceStorm struct {
	Rebalances int    `json:"rebalances"`
	WindowMs   int64  `json:"window_ms"`
	MemberID   string `json:"member_id"`
	ClientID   string `json:"client_id"`
	ClientHost string `json:"client_host"`
	Reason     string `json:"reason"`
	Times      int    `json:"times"`
	Cause      string `json:"cause"`
	Advice     string `json:"advice"`
}

// MetricsURLs splits a comma-separated --metrics-url value; a bare
// host:port gets http://.
func MetricsURLs(v string) []string {
	var out []string
	for _, u := range tool.SplitList(v) {
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
		out = append(out, strings.TrimRight(u, "/"))
	}
	return out
}

// FetchRebalances reads one broker's records (of group only, when set).
func FetchRebalances(base, group string, timeout time.Duration) (*RebalancesDoc, error) {
	u := base + RebalancesPath
	if group != "" {
		u += "?group=" + url.QueryEscape(group)
	}
	cl := &http.Client{Timeout: timeout}
	resp, err := cl.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRebalancesDoc))
	if err != nil {
		return nil, err
	}
	doc, err := DecodeRebalancesDoc(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return doc, nil
}

// DecodeRebalancesDoc decodes a /groups/rebalances document.
func DecodeRebalancesDoc(body []byte) (*RebalancesDoc, error) {
	var doc RebalancesDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// FindGroupRebalances asks every URL and returns the record of group from
// the broker that coordinates it (the only one that has it), or nil.
func FindGroupRebalances(urls []string, group string, timeout time.Duration) (*RebalanceGroup, []error) {
	var errs []error
	for _, u := range urls {
		doc, err := FetchRebalances(u, group, timeout)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for i := range doc.Groups {
			if doc.Groups[i].Group == group {
				return &doc.Groups[i], nil
			}
		}
	}
	return nil, errs
}
