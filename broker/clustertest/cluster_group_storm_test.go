package clustertest_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"samsa/broker"
	"samsa/broker/brokertest"
)

// slowHandler is a Sarama ConsumerGroupHandler that takes longer per
// message than the group's rebalance timeout: the workload of a consumer
// "processing slower than max.poll.interval.ms". It finishes the message it
// holds before it notices a rebalance, as real handlers do.
type slowHandler struct {
	per time.Duration

	mu       sync.Mutex
	sessions int
}

func (h *slowHandler) Setup(sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	h.sessions++
	h.mu.Unlock()
	return nil
}
func (h *slowHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *slowHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		time.Sleep(h.per) // the slow processing itself, not synchronisation
		s.MarkMessage(msg, "")
		if s.Context().Err() != nil {
			return nil
		}
	}
	return nil
}

// startSlowConsumer runs a Sarama group member with client id clientID:
// rebalance timeout 2 s (Sarama's Consumer.Group.Rebalance.Timeout, its
// max.poll.interval.ms), 6 s session, and a handler taking 3 s a message.
func startSlowConsumer(t *testing.T, c *brokertest.Cluster, group, topic, clientID string) *slowHandler {
	h := &slowHandler{per: 3 * time.Second}
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.ClientID = clientID
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.MaxProcessingTime = 5 * time.Second
	g := &cfg.Consumer.Group
	g.Session.Timeout, g.Heartbeat.Interval = 6*time.Second, 500*time.Millisecond
	g.Rebalance.Timeout, g.Rebalance.Retry.Backoff = 2*time.Second, 200*time.Millisecond
	cg, err := sarama.NewConsumerGroup(c.Addrs(), group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, h); errors.Is(err, sarama.ErrClosedConsumerGroup) {
				return
			} else if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		closed := make(chan struct{})
		go func() { _ = cg.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(20 * time.Second):
		}
		<-done
	})
	return h
}

// TestClusterGroupRebalanceStorm reproduces the runbook's storm
// (docs/groups.md): two Sarama consumers whose handler takes 3 s a message
// with a 2 s rebalance timeout. Each rebalance finds one of them busy; it
// is dropped from the join, rejoins with a new member id and starts the
// next rebalance, which drops the other. The broker logs every rebalance
// at INFO with its reason and one storm WARN naming the client and the
// cause; the counter per reason is on the metrics endpoint;
// kafka-consumer-groups --describe --state prints Kafka's table unchanged
// and, with --verbose, the reasons; samsa-doctor lists the group with the
// runbook's advice.
func TestClusterGroupRebalanceStorm(t *testing.T) {
	hook := logtest.NewGlobal()
	hook.Reset()
	c := brokertest.NewCluster(t, 1, brokertest.WithLogHook(hook),
		brokertest.WithProperty("offsets.topic.num.partitions", "1"),
		brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"),
		brokertest.WithProperty("samsa.group.rebalance.storm.count", "3"),
		brokertest.WithProperty("samsa.group.rebalance.storm.window.ms", "120000"))
	const topic, group = "storm-t", "storm-g"
	c.CreateTopic(t, topic, 2, 1)
	prod := c.SyncProducer(t, nil)
	for i := 0; i < 60; i++ {
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: int32(i % 2), Value: sarama.StringEncoder("m" + strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	startSlowConsumer(t, c, group, topic, "slow-a")
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if doc, err := fetchRebalances(c, 0, group); err != nil || len(doc.Groups) == 0 {
			return fmt.Errorf("slow-a has not joined: %v", err)
		}
		return nil
	})
	startSlowConsumer(t, c, group, topic, "slow-b")

	var warn *logrus.Entry
	brokertest.WaitFor(t, 120*time.Second, func() error {
		for _, e := range hook.AllEntries() {
			if e.Level == logrus.WarnLevel && strings.Contains(e.Message, "rebalance storm") && e.Data["group"] == group {
				warn = e
				return nil
			}
		}
		doc, _ := fetchRebalances(c, 0, group)
		return fmt.Errorf("no storm WARN yet; rebalances: %+v", doc.Groups)
	})
	if warn.Data["component"] != "group" || !strings.HasPrefix(fmt.Sprint(warn.Data["client_id"]), "slow-") ||
		!regexp.MustCompile(`member slow-[ab]-\S+ \(client\.id slow-[ab], host /127\.0\.0\.1\) exceeded max\.poll\.interval\.ms \(the rebalance timeout\) while still heartbeating \d+ times: processing slower than the poll interval`).MatchString(warn.Message) {
		t.Fatalf("storm WARN = %q %v", warn.Message, warn.Data)
	}
	// Every rebalance of the group was logged once at INFO with its reason.
	infos := map[string]int{}
	for _, e := range hook.AllEntries() {
		if e.Message == "group: preparing to rebalance" && e.Data["group"] == group {
			if e.Data["reason"] == "" || e.Data["generation"] == nil {
				t.Fatalf("INFO without reason or generation: %v", e.Data)
			}
			infos[fmt.Sprint(e.Data["reason_kind"])]++
		}
	}
	if infos["max_poll_interval_expired"] == 0 || infos["member_joined"] == 0 {
		t.Fatalf("rebalance INFO lines by reason: %v", infos)
	}
	sample := `kafka_coordinator_group_groupcoordinator_rebalancecount_total{group="` + group + `",reason="max_poll_interval_expired"}`
	if v, err := brokertest.ScrapeValue(c, 0, sample); err != nil || v < 1 || int(v) > infos["max_poll_interval_expired"] {
		t.Fatalf("%s = %v, %v (INFO lines %v)", sample, v, err, infos)
	}

	samsa := brokertest.SamsaBinary(t)
	metricsURL := "http://" + c.Broker(0).Addr(broker.MetricsListenerName).String()
	plain, _ := runBounded(t, 20*time.Second, "", samsa, "kafka-consumer-groups", "--bootstrap-server", c.Addr(0),
		"--describe", "--state", "--group", group)
	kafkaTable := regexp.MustCompile(`^\nGROUP +COORDINATOR \(ID\) +ASSIGNMENT-STRATEGY +STATE +#MEMBERS\n` +
		`storm-g +127\.0\.0\.1:\d+ +\(1\) +\S* +\S+ +\d+\n$`)
	if !kafkaTable.MatchString(plain) {
		t.Fatalf("describe --state without --verbose is not Kafka's table: %q", plain)
	}
	verbose, _ := runBounded(t, 20*time.Second, "", samsa, "kafka-consumer-groups", "--bootstrap-server", c.Addr(0),
		"--describe", "--state", "--verbose", "--group", group, "--metrics-url", metricsURL)
	if !strings.HasPrefix(verbose, strings.SplitN(plain, "\nstorm-g", 2)[0]) ||
		!regexp.MustCompile(`(?m)^GROUP +GENERATION +TIME +REASON +DETAIL$`).MatchString(verbose) ||
		!regexp.MustCompile(`(?m)^storm-g +\d+ +\S+Z +max_poll_interval_expired +Adding new member slow-[ab]-\S+ with group instance id None; the client's previous member was removed`).MatchString(verbose) ||
		!strings.Contains(verbose, "REBALANCE STORM: ") {
		t.Fatalf("describe --state --verbose:\n%s", verbose)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, samsa, "doctor", "--skip-host", "--metrics-url", metricsURL)
	out, err := cmd.Output()
	doc, stderr := string(out), fmt.Sprint(err)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("doctor with a storm: %v, want exit status 1\n%s", err, doc)
	}
	if !strings.Contains(doc, "[WARN] group storm-g is in a rebalance storm: ") ||
		!strings.Contains(doc, "cause: member slow-") || !strings.Contains(doc, "times: processing slower than the poll interval\n") ||
		!strings.Contains(doc, "fix: raise max.poll.interval.ms (Sarama: Consumer.Group.Rebalance.Timeout) above the slowest batch") ||
		!strings.Contains(doc, "cooperative-sticky") || !strings.Contains(doc, "static membership") {
		t.Fatalf("doctor:\n%s\n%s", doc, stderr)
	}
}
