package dumplog

import (
	"strings"
	"testing"

	"samsa/tools/internal/tooltest"
)

// TestToolRunClassScript runs bin/kafka-run-class.sh: a known tool class
// runs the matching samsa subcommand, an unknown one fails as java does.
func TestToolRunClassScript(t *testing.T) {
	out, code := tooltest.RunScript(t, nil, "kafka-run-class.sh", "kafka.NoSuchTool")
	if code != 1 || out != "Error: Could not find or load main class kafka.NoSuchTool\n" {
		t.Errorf("unknown class: exit %d %q", code, out)
	}
	dir := writeDumpFixture(t)
	idx := strings.Join(segmentFiles(t, dir, ".index"), ",")
	out, code = tooltest.RunScript(t, nil, "kafka-run-class.sh", "kafka.tools.DumpLogSegments", "--files", idx)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	tooltest.CheckGolden(t, "dump_log_index", []byte(strings.ReplaceAll(out, dir, "DIR")))
}
