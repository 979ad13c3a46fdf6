package serverstart

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"samsa/config"
	"samsa/tools/internal/tool"
)

// TestToolServerStartLogSettings: log.format=json and log.level reach the
// process logger, and SAMSA_LOG_FILE (set by kafka-server-start.sh
// -daemon) receives the same lines as the console.
func TestToolServerStartLogSettings(t *testing.T) {
	cfg, _, err := config.NewBroker(map[string]string{"zookeeper.connect": "z:2181", "log.format": "json", "log.level": "DEBUG"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "server.log")
	t.Setenv("SAMSA_LOG_FILE", file)
	var console bytes.Buffer
	l := logrus.New()
	l.SetOutput(&console)
	l.SetLevel(logrus.InfoLevel)
	closeLog, err := applyLogSettings(tool.Env{Logger: l}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.WithField("component", "broker").Debug("became leader")
	closeLog()
	l.Info("after close")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(data), &line); err != nil {
		t.Fatalf("server.log %q: %v", data, err)
	}
	if line["component"] != "broker" || line["msg"] != "became leader" || line["level"] != "debug" {
		t.Errorf("server.log line %v", line)
	}
	if !strings.Contains(console.String(), `"msg":"became leader"`) || !strings.Contains(console.String(), "after close") {
		t.Errorf("console %q", console.String())
	}
	if strings.Contains(string(data), "after close") {
		t.Error("line written to the log file after close")
	}

	// Defaults leave the logger alone.
	def, _, _ := config.NewBroker(map[string]string{"zookeeper.connect": "z:2181"})
	t.Setenv("SAMSA_LOG_FILE", "")
	l2 := logrus.New()
	l2.SetLevel(logrus.WarnLevel)
	f := l2.Formatter
	closeLog, err = applyLogSettings(tool.Env{Logger: l2}, def)
	if err != nil || l2.GetLevel() != logrus.WarnLevel || l2.Formatter != f {
		t.Errorf("defaults changed the logger: %v %v", l2.GetLevel(), err)
	}
	closeLog()
}
