package tooltest

// A broker's /groups/rebalances document served over HTTP, for the
// kafka-consumer-groups --verbose and samsa doctor tests.

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// RebalancesFixture is a /groups/rebalances document as a broker serves
// it (field names of broker.RebalancesDoc).
const RebalancesFixture = `{"broker":1,"time":"2026-12-01T11:00:00Z","groups":[
 {"group":"calm","state":"Stable","generation":1,"counts":{"member_joined":1},
  "rebalances":[{"time":"2026-12-01T10:59:00.5Z","generation":0,"reason":"member_joined","member_id":"c-1","client_id":"c","client_host":"/10.0.0.1","detail":"Adding new member c-1 with group instance id None"}]},
 {"group":"busy","state":"PreparingRebalance","generation":7,"counts":{"max_poll_interval_expired":6},
  "rebalances":[{"time":"2026-12-01T10:59:58Z","generation":6,"reason":"max_poll_interval_expired","member_id":"s-9","client_id":"s","client_host":"/10.0.0.2","detail":"Adding new member s-9 with group instance id None"}],
  "storm":{"rebalances":6,"window_ms":600000,"member_id":"s-8","client_id":"s","client_host":"/10.0.0.2","reason":"max_poll_interval_expired","times":3,
   "cause":"member s-8 (client.id s, host /10.0.0.2) exceeded max.poll.interval.ms (the rebalance timeout) while still heartbeating 3 times: processing slower than the poll interval",
   "advice":"raise max.poll.interval.ms"}}]}`

// RebalancesServer serves RebalancesFixture at path (groups.RebalancesPath)
// as a broker's metrics endpoint does, until the test ends.
func RebalancesServer(t *testing.T, path string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(RebalancesFixture))
	}))
	t.Cleanup(srv.Close)
	return srv
}
