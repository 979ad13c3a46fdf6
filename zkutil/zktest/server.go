package zktest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// JarPath is where Debian's zookeeper package installs the server jar. Its
// manifest Class-Path names the dependency jars under /usr/share/java.
const JarPath = "/usr/share/java/zookeeper.jar"

// startTimeout bounds the wait for a fresh JVM to answer "ruok" (the machine
// running the tests may be busy).
const startTimeout = 90 * time.Second

// Server is one ZooKeeper server process listening on 127.0.0.1.
type Server struct {
	// Addr is host:port of the client port.
	Addr string
	// SecureAddr is "127.0.0.1:port" of the TLS client port of a server
	// started with StartTLSServer; "" otherwise.
	SecureAddr string

	dir  string
	java string
	seq  atomic.Int64 // chroot counter
	stop sync.Once
	mu   struct {
		sync.Mutex
		cmd    *exec.Cmd     // guarded by mu; the current JVM
		exited chan struct{} // guarded by mu; closed when cmd has exited
	}
}

// StartServer launches a standalone ZooKeeper from Debian's jar on a free
// loopback port in a temporary directory and waits until it answers "ruok".
// The caller must call Stop (TestMain-friendly; tests usually use Start).
func StartServer() (*Server, error) {
	if _, err := os.Stat(JarPath); err != nil {
		return nil, fmt.Errorf("zktest: %s not found (%v): install ZooKeeper with `apt-get install zookeeper`", JarPath, err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("zktest: no java on PATH: install ZooKeeper with `apt-get install zookeeper` (it pulls a JRE)")
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := launch(java, nil)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// TLSConfig is the server side of ZooKeeper's TLS client port (KIP-515's
// peer): a key store and trust store as ZooKeeper's X509Util reads them.
type TLSConfig struct {
	KeyStore, KeyStorePassword, KeyStoreType       string
	TrustStore, TrustStorePassword, TrustStoreType string
	ClientAuth                                     string // need, want or none
}

// StartTLSServer is StartServer with a TLS client port too (Netty
// connection factory, secureClientPort), at SecureAddr. The caller must call
// Stop.
func StartTLSServer(tc TLSConfig) (*Server, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("zktest: no java on PATH")
	}
	return launch(java, &tc)
}

func launch(java string, tc *TLSConfig) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("zktest: free port: %w", err)
	}
	var secure []string
	securePort := 0
	if tc != nil {
		if securePort, err = freePort(); err != nil {
			return nil, fmt.Errorf("zktest: free port: %w", err)
		}
		secure = []string{
			"secureClientPort=" + strconv.Itoa(securePort),
			"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
			"ssl.keyStore.location=" + tc.KeyStore, "ssl.keyStore.password=" + tc.KeyStorePassword, "ssl.keyStore.type=" + tc.KeyStoreType,
			"ssl.trustStore.location=" + tc.TrustStore, "ssl.trustStore.password=" + tc.TrustStorePassword, "ssl.trustStore.type=" + tc.TrustStoreType,
			"ssl.clientAuth=" + tc.ClientAuth,
		}
	}
	dir, err := os.MkdirTemp("", "samsa-zktest-")
	if err != nil {
		return nil, fmt.Errorf("zktest: temp dir: %w", err)
	}
	cfg := strings.Join([]string{
		"tickTime=200",
		"dataDir=" + filepath.Join(dir, "data"),
		"clientPort=" + strconv.Itoa(port),
		"clientPortAddress=127.0.0.1",
		"maxClientCnxns=0",
		"minSessionTimeout=400",
		"maxSessionTimeout=60000",
		"admin.enableServer=false",
		"4lw.commands.whitelist=ruok,srvr,stat,cons,mntr",
		"forceSync=no",
	}, "\n") + "\n" + strings.Join(append(secure, ""), "\n")
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("zktest: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, java: java}
	if tc != nil {
		s.SecureAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(securePort))
	}
	if err := s.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// start runs the JVM on s.dir's zoo.cfg and waits for "ruok".
func (s *Server) start() error {
	logf, err := os.OpenFile(filepath.Join(s.dir, "zookeeper.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(s.java,
		"-Xms16m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
		"-Xshare:auto", "-Djava.awt.headless=true", "-Dzookeeper.admin.enableServer=false",
		"-cp", s.classpath(),
		"org.apache.zookeeper.server.ZooKeeperServerMain", filepath.Join(s.dir, "zoo.cfg"))
	cmd.Stdout, cmd.Stderr = logf, logf
	// Kill the JVM if the test binary dies without calling Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("zktest: starting java: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.mu.cmd, s.mu.exited = cmd, exited
	s.mu.Unlock()
	deadline := time.Now().Add(startTimeout)
	for {
		// ZooKeeper's Netty connection factory (the TLS server) answers
		// four-letter words with nothing; a session is proof enough there.
		if (s.SecureAddr != "" || s.ruok()) && canOpenSession(s.Addr) {
			return nil
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(filepath.Join(s.dir, "zookeeper.log"))
			return fmt.Errorf("zktest: zookeeper exited during start: %s", tail(out, 2000))
		default:
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("zktest: zookeeper did not answer ruok on %s within %v", s.Addr, startTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// classpath is Debian's jar, plus for the Netty connection factory (TLS)
// the Netty jars its manifest does not list.
func (s *Server) classpath() string {
	if s.SecureAddr == "" {
		return JarPath
	}
	return JarPath + ":/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar"
}

// kill stops the current JVM (SIGTERM, then SIGKILL after 5 s) and waits.
func (s *Server) kill() {
	s.mu.Lock()
	cmd, exited := s.mu.cmd, s.mu.exited
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Restart stops the server and starts it again on the same port and data
// directory; sessions survive if the restart is shorter than their timeout.
// Every test sharing the server sees the outage: use a server of its own
// (StartServer) for this.
func (s *Server) Restart() error {
	s.kill()
	return s.start()
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// ruok sends the four-letter word and reports whether the answer is imok.
func (s *Server) ruok() bool {
	conn, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("ruok")); err != nil {
		return false
	}
	// The server answers "imok" and closes the connection.
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return strings.HasPrefix(line, "imok")
}

// Stop kills the server and removes its directory. It is idempotent.
func (s *Server) Stop() {
	s.stop.Do(func() {
		s.kill()
		os.RemoveAll(s.dir)
	})
}

// Chroot returns a connect string with a fresh chroot unique to this
// server, named after the test: 127.0.0.1:port/samsa/<n>-<test>. Connecting
// with zkutil creates the chroot, as a Kafka broker does.
func (s *Server) Chroot(tb testing.TB) string {
	n := s.seq.Add(1)
	return s.Addr + "/samsa/" + strconv.FormatInt(n, 10) + "-" + sanitize(tb.Name())
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}
