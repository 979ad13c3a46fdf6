package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/tools/internal/tooltest"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestToolScriptsSyntax(t *testing.T) {
	scripts, _ := filepath.Glob(filepath.Join("..", "bin", "*.sh"))
	if len(scripts) < 9 {
		t.Fatalf("found only %v", scripts)
	}
	for _, s := range scripts {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", s, err, out)
		}
		if filepath.Base(s) == "_samsa.sh" {
			continue
		}
		data, _ := os.ReadFile(s)
		if !strings.Contains(string(data), "set -euo pipefail") {
			t.Errorf("%s lacks set -euo pipefail", s)
		}
		if st, _ := os.Stat(s); st.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", s)
		}
	}
}

// TestToolScriptsDaemonStartStop builds samsa through the scripts, starts a
// broker with kafka-server-start.sh -daemon, lists topics through
// kafka-topics.sh and stops it with kafka-server-stop.sh, restricted to this
// test's properties file so that no other broker on the machine is touched.
func TestToolScriptsDaemonStartStop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the samsa binary")
	}
	srv := zktest.Start(t)
	connect := srv.Chroot(t)
	dir := t.TempDir()
	port := tooltest.FreePort(t)
	props := filepath.Join(dir, "scripts-test-broker.properties")
	content := fmt.Sprintf("broker.id=7\nlisteners=PLAINTEXT://127.0.0.1:%d\nlog.dirs=%s\nzookeeper.connect=%s\n", port, filepath.Join(dir, "data"), connect)
	if err := os.WriteFile(props, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(dir, "logs")
	env := []string{"LOG_DIR=" + logDir}
	if out, code := tooltest.RunScript(t, env, "kafka-server-start.sh", "-daemon", props); code != 0 {
		t.Fatalf("start: %d %s", code, out)
	}
	pidData, err := os.ReadFile(filepath.Join(logDir, "scripts-test-broker.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidData)))
	if err != nil {
		t.Fatal(err)
	}
	alive := func() bool { return syscall.Kill(pid, 0) == nil }
	t.Cleanup(func() {
		if alive() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	zk, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	defer zk.Close()
	testwait.For(t, 60*time.Second, func() error {
		if !alive() {
			out, _ := os.ReadFile(filepath.Join(logDir, "scripts-test-broker.out"))
			t.Fatalf("broker exited:\n%s", out)
		}
		if ids, err := zk.GetBrokerIDs(); err != nil || len(ids) != 1 || ids[0] != 7 {
			return fmt.Errorf("ids %v, %v", ids, err)
		}
		return nil
	})
	out, code := tooltest.RunScript(t, nil, "kafka-topics.sh", "--bootstrap-server", fmt.Sprintf("127.0.0.1:%d", port), "--list")
	if code != 0 || out != "\n" {
		t.Errorf("list: %d %q", code, out)
	}
	if out, code := tooltest.RunScript(t, nil, "kafka-server-stop.sh", props); code != 0 {
		t.Fatalf("stop: %d %s", code, out)
	}
	testwait.For(t, 60*time.Second, func() error {
		if alive() {
			return fmt.Errorf("pid %d still running", pid)
		}
		return nil
	})
	if out, code := tooltest.RunScript(t, nil, "kafka-server-stop.sh", props); code != 1 || !strings.Contains(out, "No kafka server to stop") {
		t.Errorf("second stop: %d %q", code, out)
	}
	logOut, _ := os.ReadFile(filepath.Join(logDir, "scripts-test-broker.out"))
	if !strings.Contains(string(logOut), "shut down completed") {
		t.Errorf("no clean shutdown in the broker output:\n%s", logOut)
	}
}
