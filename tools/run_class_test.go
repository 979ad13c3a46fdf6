package tools

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"samsa/tools/internal/tooltest"
)

// TestToolRunClassScriptMapsEveryClass: every class kafka-run-class.sh
// maps reaches an existing samsa subcommand (its --help answers), so a
// harness that starts Kafka's tools by class name (Kafka's system tests do)
// finds them all.
func TestToolRunClassScriptMapsEveryClass(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "bin", "kafka-run-class.sh"))
	if err != nil {
		t.Fatal(err)
	}
	mapped := regexp.MustCompile(`(?m)^\s+([A-Za-z0-9_.]+)\) cmd=([a-z0-9-]+) ;;$`).FindAllStringSubmatch(string(script), -1)
	if len(mapped) < 10 {
		t.Fatalf("found %d class mappings in kafka-run-class.sh; the pattern no longer matches the script", len(mapped))
	}
	for _, m := range mapped {
		class, cmd := m[1], m[2]
		out, code := tooltest.RunScript(t, nil, "kafka-run-class.sh", class, "--help")
		if cmd == "kafka-server-start" {
			// It takes the properties file first and prints its usage.
			if !strings.Contains(out, "USAGE: samsa kafka-server-start server.properties") {
				t.Errorf("%s: exit %d\n%s", class, code, out)
			}
			continue
		}
		// urfave/cli answers an unknown subcommand with exit 3 and "No
		// help topic"; argparse-style tools print their own usage line.
		if code != 0 || out == "" || strings.Contains(out, "No help topic") {
			t.Errorf("%s -> %s --help: exit %d\n%s", class, cmd, code, out)
		}
	}
}
