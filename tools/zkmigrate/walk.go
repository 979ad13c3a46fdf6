package zkmigrate

// The ACL walk (ZkSecurityMigrator.run and setAclsRecursively): the
// chroot's own ACL, the path check, then each secure root and everything
// below it. Kafka pipelines asynchronous requests; here a level of the tree
// at a time is spread over walkWorkers goroutines, which bounds both the
// requests in flight and the paths held.

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

// walkWorkers bounds the ZooKeeper requests in flight during the walk.
const walkWorkers = 8

// tree is what the walk needs of a ZooKeeper session (*zkutil.Client).
type tree interface {
	SetDefaultACL(path string, secure bool) error
	Children(path string) ([]string, error)
	Exists(path string) (bool, zkutil.Stat, error)
	EnsurePath(path string) error
}

// migrator is one run of the tool.
type migrator struct {
	zk        tree
	secure    bool
	workers   int       // requests in flight; 0 is walkWorkers
	pathCheck bool      // --enable.path.check
	out       io.Writer // Kafka's println lines
	errOut    io.Writer // Kafka's WARN log lines
	mu        sync.Mutex
}

// run is ZkSecurityMigrator.run: it returns the number of znodes whose
// ACL it set.
func (m *migrator) run() (int, error) {
	if err := m.zk.SetDefaultACL("/", m.secure); err != nil {
		return 0, aclFailure(err)
	}
	missing, err := m.missingRoots()
	if err != nil {
		return 1, err
	}
	if len(missing) > 0 {
		fmt.Fprintf(m.out, "Warning: The following secure root paths do not exist in ZooKeeper: %s\n", strings.Join(missing, ","))
		fmt.Fprintln(m.out, "That might be due to an incorrect chroot is specified when executing the command.")
		if m.pathCheck {
			fmt.Fprintln(m.out, "Exit the command.")
			return 1, tool.ExitError{Code: 1}
		}
	}
	n := 1
	for _, root := range zkutil.SecureRootPaths() {
		if root == zkutil.ControllerPath() {
			if ok, _, err := m.zk.Exists(root); err != nil {
				return n, aclFailure(err)
			} else if !ok {
				continue // ephemeral: only while a controller holds it
			}
		}
		if err := m.zk.EnsurePath(root); err != nil {
			return n, aclFailure(err)
		}
		done, err := m.setACLsRecursively(root)
		n += done
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// missingRoots lists the secure root paths that do not exist.
func (m *migrator) missingRoots() ([]string, error) {
	var missing []string
	for _, p := range zkutil.SecureRootPaths() {
		ok, _, err := m.zk.Exists(p)
		if err != nil {
			return nil, aclFailure(err)
		}
		if !ok {
			missing = append(missing, p)
		}
	}
	return missing, nil
}

// setACLsRecursively sets the ACL of root and of every znode below it,
// one level of the tree at a time.
func (m *migrator) setACLsRecursively(root string) (int, error) {
	n := 0
	for level := []string{root}; len(level) > 0; {
		next, err := m.visitLevel(level)
		n += len(level)
		if err != nil {
			return n, err
		}
		level = next
	}
	return n, nil
}

// visitLevel visits every path of one level with up to walkWorkers
// goroutines and returns the next level; after the first error the
// remaining paths are not visited.
func (m *migrator) visitLevel(level []string) ([]string, error) {
	var (
		wg       sync.WaitGroup
		next     []string
		firstErr error
	)
	work := make(chan string)
	for range min(cmp.Or(m.workers, walkWorkers), len(level)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				children, err := m.visit(p)
				m.mu.Lock()
				next = append(next, children...)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				m.mu.Unlock()
			}
		}()
	}
	for _, p := range level {
		m.mu.Lock()
		failed := firstErr != nil
		m.mu.Unlock()
		if failed {
			break
		}
		work <- p
	}
	close(work)
	wg.Wait()
	return next, firstErr
}

// visit sets one znode's ACL and returns its children's paths. A znode
// deleted meanwhile is skipped with Kafka's warning.
func (m *migrator) visit(p string) ([]string, error) {
	if err := m.zk.SetDefaultACL(p, m.secure); err != nil {
		if errors.Is(err, zkutil.ErrNoNode) {
			m.warn("Znode is gone, it could be have been legitimately deleted: " + p)
			return nil, nil
		}
		return nil, aclFailure(err)
	}
	children, err := m.zk.Children(p)
	if err != nil {
		if errors.Is(err, zkutil.ErrNoNode) {
			m.warn("Node is gone, it could be have been legitimately deleted: " + p)
			return nil, nil
		}
		return nil, aclFailure(err)
	}
	out := make([]string, len(children))
	for i, c := range children {
		out[i] = strings.TrimSuffix(p, "/") + "/" + c
	}
	return out, nil
}

// warn prints one of Kafka's WARN log lines.
func (m *migrator) warn(msg string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintf(m.errOut, "WARN %s (kafka.admin.ZkSecurityMigrator)\n", msg)
}

// aclFailure words a failed request as Kafka's callbacks do.
func aclFailure(err error) error {
	if errors.Is(err, zkutil.ErrSessionExpired) {
		return tool.Errorf("ZooKeeper session expired while changing ACLs (%v)", err)
	}
	return tool.Errorf("Unexpected return code: %v", tool.UserMessage(err))
}
