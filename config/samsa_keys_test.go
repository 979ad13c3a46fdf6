package config

import "testing"

func TestConfigSamsaKeys(t *testing.T) {
	b, _, err := NewBroker(map[string]string{"zookeeper.connect": "z:2181", "metrics.listener": "http://127.0.0.1:9404", "log.format": "json", "log.level": "debug"})
	if err != nil {
		t.Fatal(err)
	}
	if b.MetricsListener != "http://127.0.0.1:9404" || b.LogFormat != "json" || b.LogLevel != "debug" {
		t.Fatalf("got %q %q %q", b.MetricsListener, b.LogFormat, b.LogLevel)
	}
	d, _, err := NewBroker(map[string]string{"zookeeper.connect": "z:2181"})
	if err != nil || d.MetricsListener != "" || d.LogFormat != "text" || d.LogLevel != "" {
		t.Fatalf("defaults %+v %v", d, err)
	}
	for _, bad := range []map[string]string{
		{"metrics.listener": "127.0.0.1:9404"},
		{"metrics.listener": "http://127.0.0.1:99999"},
		{"metrics.listener": "http://127.0.0.1:9404/metrics"},
		{"log.format": "xml"},
		{"log.level": "loud"},
	} {
		bad["zookeeper.connect"] = "z:2181"
		if _, _, err := NewBroker(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	for in, want := range map[string]string{"http://:0": ":0", "http://[::1]:9404": "[::1]:9404", "http://host:1": "host:1"} {
		if got, err := ParseHTTPListener(in); err != nil || got != want {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
}
