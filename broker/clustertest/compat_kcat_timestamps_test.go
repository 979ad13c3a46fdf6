package clustertest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// TestCompatKcatLogAppendTime: a topic with
// message.timestamp.type=LogAppendTime stamps records with the broker's
// time; librdkafka sees the type "logappend" over the current protocol and
// over Kafka 0.10's (message format v1 after down-conversion), and
// s@timestamp finds records by their append time.
func TestCompatKcatLogAppendTime(t *testing.T) {
	kcat := needTool(t, "kcat")
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "kc-lat", 1, 1, map[string]*string{"message.timestamp.type": strp("LogAppendTime")})
	bootstrap := c.Addr(0)
	before := time.Now().Add(-time.Second).UnixMilli()
	var in strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&in, "v%d\n", i)
	}
	runBounded(t, 20*time.Second, in.String(), kcat, "-b", bootstrap, "-P", "-t", "kc-lat", "-p", "0", "-z", "gzip")
	after := time.Now().Add(time.Second).UnixMilli()
	for _, extra := range [][]string{nil, {"-X", "api.version.request=false", "-X", "broker.version.fallback=0.10.0"}} {
		msgs := kcatJSON(t, kcat, bootstrap, "kc-lat", 0, "beginning", extra...)
		if len(msgs) != 10 {
			t.Fatalf("%v: consumed %d of 10", extra, len(msgs))
		}
		for _, m := range msgs {
			if m.TsType != "logappend" || m.Ts < before || m.Ts > after {
				t.Fatalf("%v: record %d has timestamp %s %d, want logappend in [%d, %d]", extra, m.Offset, m.TsType, m.Ts, before, after)
			}
		}
	}
	if msgs := kcatJSON(t, kcat, bootstrap, "kc-lat", 0, fmt.Sprintf("s@%d", before)); len(msgs) != 10 {
		t.Fatalf("s@ before the append: %d records", len(msgs))
	}
	if msgs := kcatJSON(t, kcat, bootstrap, "kc-lat", 0, fmt.Sprintf("s@%d", after)); len(msgs) != 0 {
		t.Fatalf("s@ after the append: %d records", len(msgs))
	}
}
