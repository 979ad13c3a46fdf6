package clustertest_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// kcatStream is a long-running kcat consumer whose JSON records are
// collected.
type kcatStream struct {
	*kcatProc

	mu      sync.Mutex
	records []kcatMsg
	stderr  strings.Builder
}

func startKcatStream(t *testing.T, kcat string, args ...string) *kcatStream {
	t.Helper()
	s := &kcatStream{}
	s.kcatProc = startKcat(t, kcat, args, func(m kcatMsg) {
		s.mu.Lock()
		s.records = append(s.records, m)
		s.mu.Unlock()
	}, func(line string) {
		s.mu.Lock()
		s.stderr.WriteString(line + "\n")
		s.mu.Unlock()
	})
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		<-s.done
	})
	return s
}

func (s *kcatStream) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.records)
}

func (s *kcatStream) stderrText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// TestCompatKcatLeaderFailover: librdkafka producers (plain and idempotent)
// and a consumer keep working while the partition leader is killed and
// comes back: the producers retry after NOT_LEADER_OR_FOLLOWER and
// disconnects, the consumer follows the new leader (validating its
// position with OffsetForLeaderEpoch, KIP-320), and every record is read
// exactly once, in order per producer.
func TestCompatKcatLeaderFailover(t *testing.T) {
	kcat := needTool(t, "kcat")
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("auto.leader.rebalance.enable", "false"),
		brokertest.WithProperty("unclean.leader.election.enable", "false"))
	c.CreateTopic(t, "kc-fail", 1, 3)
	c.WaitForISR(t, "kc-fail", 0, 3)
	bootstrap := strings.Join(c.Addrs(), ",")
	cons := startKcatStream(t, kcat, "-b", bootstrap, "-C", "-t", "kc-fail", "-p", "0", "-o", "beginning",
		"-J", "-u", "-X", "fetch.wait.max.ms=100", "-X", "topic.metadata.refresh.interval.ms=500")
	common := []string{"-b", bootstrap, "-P", "-t", "kc-fail", "-p", "0", "-K", ":", "-X", "acks=all",
		"-X", "message.timeout.ms=25000", "-X", "linger.ms=0", "-X", "topic.metadata.refresh.interval.ms=500"}
	// kcat -P reads its input in blocks, so each phase runs its own pair of
	// producers over a finite input.
	sent := 0
	var producerErrs []string
	send := func(n int) {
		t.Helper()
		var plain, idem strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&plain, "plain:%d\n", sent+i)
			fmt.Fprintf(&idem, "idem:%d\n", sent+i)
		}
		sent += n
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, in := range []struct {
			input string
			extra []string
		}{{plain.String(), nil}, {idem.String(), []string{"-X", "enable.idempotence=true"}}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errOut, ok := runKcatStatus(t, in.input, kcat, append(slices.Clone(common), in.extra...)...)
				if !ok {
					mu.Lock()
					producerErrs = append(producerErrs, errOut)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(producerErrs) > 0 {
			t.Fatalf("a producer failed:\n%s", strings.Join(producerErrs, "\n"))
		}
	}
	waitRead := func(what string) {
		t.Helper()
		brokertest.WaitFor(t, 25*time.Second, func() error {
			if n := cons.count(); n < 2*sent {
				return fmt.Errorf("%s: consumer read %d of %d\nconsumer: %s", what, n, 2*sent, cons.stderrText())
			}
			return nil
		})
	}
	send(50)
	waitRead("before the failover")
	leader := c.WaitForLeader(t, "kc-fail", 0)
	c.Kill(c.Index(leader))
	send(50) // while the controller elects a new leader
	brokertest.WaitFor(t, 20*time.Second, func() error {
		for i := 0; i < c.N(); i++ {
			if b := c.Broker(i); b != nil {
				if ps, ok := b.Metadata().Partition("kc-fail", 0); !ok || ps.Leader == leader || ps.Leader < 0 {
					return fmt.Errorf("no new leader yet")
				}
			}
		}
		return nil
	})
	send(50)
	waitRead("after the failover")
	c.Restart(c.Index(leader))
	c.WaitForISR(t, "kc-fail", 0, 3)
	send(50)
	waitRead("after the restart")
	cons.mu.Lock()
	records := slices.Clone(cons.records)
	cons.mu.Unlock()
	next := map[string]int{}
	dups := 0
	for _, r := range records {
		k := derefOr(r.Key, "")
		want := fmt.Sprint(next[k])
		if derefOr(r.Payload, "") != want {
			if k == "plain" && derefOr(r.Payload, "") < want {
				dups++ // acks=all without idempotence may duplicate on retry
				continue
			}
			t.Fatalf("%s producer: read %q at offset %d, want %s", k, derefOr(r.Payload, ""), r.Offset, want)
		}
		next[k]++
	}
	if next["plain"] != sent || next["idem"] != sent {
		t.Fatalf("read plain %d, idempotent %d of %d each", next["plain"], next["idem"], sent)
	}
	t.Logf("%d records per producer; the plain producer duplicated %d on retries", sent, dups)
	if errs := cons.stderrText(); strings.Contains(errs, "ERROR") {
		t.Logf("consumer stderr:\n%s", errs)
	}
}
