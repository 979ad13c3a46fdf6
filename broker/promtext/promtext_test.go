package promtext

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestPromNames(t *testing.T) {
	for _, tc := range []struct {
		in, base, labels string
	}{
		{"kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec", "kafka_server_brokertopicmetrics_messagesinpersec", ""},
		{"kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t.1-x", "kafka_server_brokertopicmetrics_messagesinpersec", `{topic="t.1-x"}`},
		{"kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Produce", "kafka_server_delayedoperationpurgatory_purgatorysize", `{delayedOperation="Produce"}`},
		{"kafka.server:type=socket-server-metrics,name=connection-count", "kafka_server_socket_server_metrics_connection_count", ""},
		{"broker.panics", "broker_panics", ""},
		{"ActiveControllerCount", "activecontrollercount", ""},
		{"9lives", "_9lives", ""},
		{"d:name=x,b=\"q\\\n,a=1", "d_x", `{a="1",b="\"q\\\n"}`},
	} {
		base, ls := splitName(tc.in)
		if base != tc.base || formatLabels(ls) != tc.labels {
			t.Errorf("%q: %q %q, want %q %q", tc.in, base, formatLabels(ls), tc.base, tc.labels)
		}
	}
}

func goldenRegistry() metrics.Registry {
	reg := metrics.NewRegistry()
	metrics.GetOrRegisterCounter("broker.panics", reg).Inc(2)
	metrics.GetOrRegisterGauge("kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", reg).Update(3)
	_ = reg.Register("kafka.server:type=ReplicaManager,name=PartitionCount", metrics.NewFunctionalGauge(func() int64 { return 7 }))
	metrics.GetOrRegisterGaugeFloat64("kafka.x:type=Y,name=Ratio", reg).Update(0.25)
	for _, req := range []string{"Produce", "Fetch"} {
		h := metrics.GetOrRegisterHistogram("kafka.network:type=RequestMetrics,name=TotalTimeMs,request="+req, reg, metrics.NewUniformSample(1000))
		for i := int64(1); i <= 100; i++ {
			h.Update(i)
		}
	}
	// Same family, different kind: skipped.
	metrics.GetOrRegisterGauge("kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions,topic=z", reg).Update(1)
	metrics.GetOrRegisterCounter("a:type=B,name=C", reg).Inc(1)
	metrics.GetOrRegisterGauge("a:type=B,name=C_total", reg).Update(9)
	// Renamed.
	metrics.GetOrRegisterGauge("ActiveControllerCount", reg).Update(1)
	return reg
}

func TestPromWriteGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, goldenRegistry(), func(n string) string {
		if n == "ActiveControllerCount" {
			return "kafka.controller:type=KafkaController,name=" + n
		}
		return n
	}); err != nil {
		t.Fatal(err)
	}
	path := "testdata/write.golden"
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("output differs from %s (run with -update):\n%s", path, buf.String())
	}
}

func TestPromMeterAndTimer(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.GetOrRegisterMeter("kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t", reg).Mark(5)
	metrics.GetOrRegisterTimer("x:type=T,name=Lat", reg).Update(1500 * time.Millisecond)
	var buf bytes.Buffer
	if err := Write(&buf, reg, nil); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, re := range []string{
		`(?m)^# TYPE kafka_server_brokertopicmetrics_messagesinpersec_total counter$`,
		`(?m)^kafka_server_brokertopicmetrics_messagesinpersec_total\{topic="t"\} 5$`,
		`(?m)^# TYPE kafka_server_brokertopicmetrics_messagesinpersec_rate gauge$`,
		`(?m)^kafka_server_brokertopicmetrics_messagesinpersec_rate\{topic="t",window="1m"\} [0-9.e+-]+$`,
		`(?m)^x_t_lat_seconds\{quantile="0.5"\} 1.5$`,
		`(?m)^x_t_lat_seconds_sum 1.5$`,
		`(?m)^x_t_lat_seconds_count 1$`,
		`(?m)^x_t_lat_total 1$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no match for %s in:\n%s", re, out)
		}
	}
	checkExposition(t, out)
}

// checkExposition checks the text format's line grammar and that each
// family's samples are contiguous after its TYPE line.
func checkExposition(t *testing.T, out string) {
	t.Helper()
	line := regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})? [-+0-9.eEInfNa]+$`)
	seen := map[string]bool{}
	cur := ""
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "# HELP "):
		case strings.HasPrefix(l, "# TYPE "):
			cur = strings.Fields(l)[2]
			if seen[cur] {
				t.Errorf("family %s twice", cur)
			}
			seen[cur] = true
		default:
			if !line.MatchString(l) {
				t.Errorf("bad line %q", l)
			}
			if !strings.HasPrefix(l, cur) {
				t.Errorf("line %q outside its family %s", l, cur)
			}
		}
	}
}

func TestPromServer(t *testing.T) {
	reg := goldenRegistry()
	s, err := Listen("127.0.0.1:0", reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	url := "http://" + s.Addr().String()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ContentType {
		t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	checkExposition(t, string(body))
	if !strings.Contains(string(body), "kafka_server_replicamanager_partitioncount 7\n") {
		t.Errorf("body:\n%s", body)
	}
	for path, code := range map[string]int{"/": 404, "/other": 404} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	resp, err = http.Post(url+"/metrics", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url + "/metrics"); err == nil {
		t.Error("still serving after Close")
	}
}

func FuzzPromNames(f *testing.F) {
	for _, s := range []string{"kafka.server:type=A,name=B,topic=t", "a:b", ":", "x:=,=y,k=", "d:name=\"\\\n"} {
		f.Add(s)
	}
	valid := regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	f.Fuzz(func(t *testing.T, s string) {
		base, ls := splitName(s)
		if !valid.MatchString(base) {
			t.Fatalf("name %q from %q", base, s)
		}
		for _, l := range ls {
			if !valid.MatchString(l.name) {
				t.Fatalf("label %q from %q", l.name, s)
			}
		}
		_ = formatLabels(ls)
	})
}

// BenchmarkPromWrite renders a registry shaped like a broker's: a meter and
// a histogram per API (about 70 APIs), plus a few gauges.
func BenchmarkPromWrite(b *testing.B) {
	reg := metrics.NewRegistry()
	for i := 0; i < 70; i++ {
		tag := ",request=Api" + strconv.Itoa(i)
		metrics.GetOrRegisterMeter("kafka.network:type=RequestMetrics,name=RequestsPerSec"+tag, reg).Mark(int64(i))
		h := metrics.GetOrRegisterHistogram("kafka.network:type=RequestMetrics,name=TotalTimeMs"+tag, reg, metrics.NewExpDecaySample(1028, 0.015))
		for j := int64(0); j < 1028; j++ {
			h.Update(j % 97)
		}
	}
	for i := 0; i < 10; i++ {
		metrics.GetOrRegisterGauge("kafka.server:type=ReplicaManager,name=G"+strconv.Itoa(i), reg).Update(int64(i))
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		if err := Write(&buf, reg, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}
