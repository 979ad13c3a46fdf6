package brokertest

// Building the samsa binary that ProcCluster runs.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// samsaBinary is the samsa binary built once per test binary (S1.5
// test-hook exception: package-level state in test-only code).
var samsaBinary struct {
	once sync.Once
	path string
	err  error
}

// SamsaBinary builds ./tools/samsa of the module once per test binary and
// returns its path: <temp>/samsa-brokertest-<uid>-<hash of the module
// dir>/samsa, shared by later runs (go build's cache makes a rebuild cheap)
// so nothing accumulates. The build goes to a unique name first and is
// renamed into place, so a binary that another test process is running is
// never written over.
func SamsaBinary(t testing.TB) string {
	t.Helper()
	samsaBinary.once.Do(func() {
		samsaBinary.path, samsaBinary.err = buildSamsa()
	})
	if samsaBinary.err != nil {
		t.Fatalf("%v", samsaBinary.err)
	}
	return samsaBinary.path
}

func buildSamsa() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	h := fnv.New32a()
	h.Write([]byte(root))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("samsa-brokertest-%d-%08x", os.Getuid(), h.Sum32()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "samsa")
	tmp := fmt.Sprintf("%s.%d", out, os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, "./tools/samsa")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("brokertest: go build ./tools/samsa: %v\n%s", err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return out, nil
}

// moduleRoot walks up from the working directory to the go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for i := 0; i < 64; i++ {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("brokertest: go.mod not found above the working directory")
}
