package broker

import (
	"encoding/json"
	"net/http"
	"time"

	"samsa/broker/group"
)

// GroupRebalancesPath is where the metrics listener serves the rebalance
// records of the groups this broker coordinates, as JSON (Samsa; Kafka's
// wire has no place for them). GET ?group=g limits the answer to one
// group. kafka-consumer-groups --describe --state --verbose and
// samsa-doctor read it (docs/groups.md has the format).
const GroupRebalancesPath = "/groups/rebalances"

// RebalancesDoc is the JSON document at GroupRebalancesPath.
type RebalancesDoc struct {
	Broker int32            `json:"broker"`
	Time   time.Time        `json:"time"`
	Groups []RebalanceGroup `json:"groups"`
}

// RebalanceGroup is one group's record.
type RebalanceGroup struct {
	Group      string           `json:"group"`
	State      string           `json:"state"`
	Generation int32            `json:"generation"`
	Counts     map[string]int64 `json:"counts"`
	Rebalances []RebalanceEntry `json:"rebalances"` // oldest first
	Storm      *RebalanceStorm  `json:"storm,omitempty"`
}

// RebalanceEntry is one rebalance.
type RebalanceEntry struct {
	Time            time.Time `json:"time"`
	Generation      int32     `json:"generation"`
	Reason          string    `json:"reason"`
	MemberID        string    `json:"member_id,omitempty"`
	GroupInstanceID string    `json:"group_instance_id,omitempty"`
	ClientID        string    `json:"client_id,omitempty"`
	ClientHost      string    `json:"client_host,omitempty"`
	Protocol        string    `json:"protocol,omitempty"`
	Detail          string    `json:"detail"`
}

// RebalanceStorm is a storm in progress.
type RebalanceStorm struct {
	Since           time.Time `json:"since"`
	Rebalances      int       `json:"rebalances"`
	WindowMs        int64     `json:"window_ms"`
	MemberID        string    `json:"member_id,omitempty"`
	GroupInstanceID string    `json:"group_instance_id,omitempty"`
	ClientID        string    `json:"client_id,omitempty"`
	ClientHost      string    `json:"client_host,omitempty"`
	Reason          string    `json:"reason"`
	Times           int       `json:"times"`
	Cause           string    `json:"cause"`
	Advice          string    `json:"advice"`
}

// RebalancesDocument builds the document, for one group when only is set.
func (b *Broker) RebalancesDocument(only string) RebalancesDoc {
	doc := RebalancesDoc{Broker: b.ID(), Time: time.Now().UTC(), Groups: []RebalanceGroup{}}
	if b.groups == nil {
		return doc
	}
	for _, gr := range b.groups.Rebalances() {
		if only != "" && gr.Group != only {
			continue
		}
		out := RebalanceGroup{Group: gr.Group, State: gr.State, Generation: gr.Generation,
			Counts: map[string]int64{}, Rebalances: []RebalanceEntry{}}
		for k, v := range gr.Counts {
			out.Counts[string(k)] = v
		}
		for _, r := range gr.History {
			out.Rebalances = append(out.Rebalances, RebalanceEntry{Time: r.Time.UTC(), Generation: r.Generation,
				Reason: string(r.Kind), MemberID: r.MemberID, GroupInstanceID: r.GroupInstanceID, ClientID: r.ClientID,
				ClientHost: r.ClientHost, Protocol: r.Protocol, Detail: r.Reason})
		}
		if s := gr.Storm; s != nil {
			out.Storm = &RebalanceStorm{Since: s.Since.UTC(), Rebalances: s.Rebalances, WindowMs: s.Window.Milliseconds(),
				MemberID: s.MemberID, GroupInstanceID: s.GroupInstanceID, ClientID: s.ClientID, ClientHost: s.ClientHost,
				Reason: string(s.Kind), Times: s.Times, Cause: s.Cause, Advice: group.StormAdvice(s.Kind)}
		}
		doc.Groups = append(doc.Groups, out)
	}
	return doc
}

func (b *Broker) serveGroupRebalances(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodHead {
		return
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(b.RebalancesDocument(r.URL.Query().Get("group")))
}
