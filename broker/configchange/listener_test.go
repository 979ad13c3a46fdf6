package configchange_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/configchange"
	"samsa/internal/testwait"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

func connect(t *testing.T) *zkutil.Client {
	t.Helper()
	srv := zktest.Start(t)
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zkutil.Connect(ctx, zkutil.Config{Connect: srv.Chroot(t), SessionTimeout: 6 * time.Second, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.CreatePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	return c
}

// recorder collects what the handlers saw, in order.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// waitLen waits until r holds n entries (never more) and returns them.
func (r *recorder) waitLen(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	testwait.For(t, 20*time.Second, func() error {
		got = r.snapshot()
		if len(got) != n {
			return fmt.Errorf("got %q, want %d calls", got, n)
		}
		return nil
	})
	return got
}

func run(t *testing.T, zk *zkutil.Client, handlers ...configchange.Handler) {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		configchange.New(zk, log, handlers...).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestConfigChangeDispatchByEntityType: one listener hands each
// notification to the handlers of its entity type, in registration order;
// notifications written before it started are processed first (Kafka's
// listener starts at -1), after the handlers' Load; none is delivered twice.
func TestConfigChangeDispatchByEntityType(t *testing.T) {
	zk := connect(t)
	if err := zk.SetEntityConfig(zkutil.ConfigTypeTopic, "early", map[string]string{"retention.ms": "1"}); err != nil {
		t.Fatal(err)
	}
	var r recorder
	record := func(h string) func(configchange.Change) error {
		return func(c configchange.Change) error { r.add(h + " " + c.Path()); return nil }
	}
	run(t, zk,
		configchange.Handler{Name: "a", Load: func() error { r.add("a load"); return nil }, Apply: map[string]func(configchange.Change) error{
			zkutil.ConfigTypeTopic: record("a"), zkutil.ConfigTypeUser: record("a"),
		}},
		configchange.Handler{Name: "b", Apply: map[string]func(configchange.Change) error{
			zkutil.ConfigTypeTopic: record("b"), zkutil.ConfigTypeBroker: record("b"),
		}},
	)
	want := []string{"a load", "a topics/early", "b topics/early"}
	if got := r.waitLen(t, len(want)); !slices.Equal(got, want) {
		t.Fatalf("start: got %q, want %q", got, want)
	}
	for _, w := range []struct{ typ, name string }{
		{zkutil.ConfigTypeUser, "alice/clients/app"},
		{zkutil.ConfigTypeBroker, "<default>"},
		{zkutil.ConfigTypeClient, "nobody-listens"},
		{zkutil.ConfigTypeTopic, "late"},
	} {
		if err := zk.SetEntityConfig(w.typ, w.name, map[string]string{"k": "v"}); err != nil {
			t.Fatal(err)
		}
	}
	// A notification without <type>/<name> is skipped.
	if err := zk.WriteConfigChange("topics"); err != nil {
		t.Fatal(err)
	}
	if err := zk.SetEntityConfig(zkutil.ConfigTypeTopic, "last", nil); err != nil {
		t.Fatal(err)
	}
	want = append(want, "a users/alice/clients/app", "b brokers/<default>", "a topics/late", "b topics/late",
		"a topics/last", "b topics/last")
	if got := r.waitLen(t, len(want)); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestConfigChangeLoadGatesApply: a handler whose Load fails gets no Apply
// calls and is loaded again on the next notification; an Apply error makes
// the next notification load it again; a handler without Load is called
// throughout.
func TestConfigChangeLoadGatesApply(t *testing.T) {
	zk := connect(t)
	var r recorder
	var mu sync.Mutex
	loadErrs := []error{errors.New("zk down"), nil, nil}
	applyErrs := map[string]error{"topics/t2": errors.New("bad config")}
	run(t, zk,
		configchange.Handler{Name: "gated",
			Load: func() error {
				mu.Lock()
				defer mu.Unlock()
				err := loadErrs[0]
				loadErrs = loadErrs[1:]
				r.add(fmt.Sprintf("load %v", err))
				return err
			},
			Apply: map[string]func(configchange.Change) error{zkutil.ConfigTypeTopic: func(c configchange.Change) error {
				r.add("gated " + c.Path())
				return applyErrs[c.Path()]
			}}},
		configchange.Handler{Name: "plain", Apply: map[string]func(configchange.Change) error{
			zkutil.ConfigTypeTopic: func(c configchange.Change) error { r.add("plain " + c.Path()); return errors.New("ignored") },
		}},
	)
	want := []string{"load zk down"}
	if got := r.waitLen(t, len(want)); !slices.Equal(got, want) {
		t.Fatalf("start: got %q, want %q", got, want)
	}
	step := func(topic string, more ...string) {
		t.Helper()
		if err := zk.SetEntityConfig(zkutil.ConfigTypeTopic, topic, nil); err != nil {
			t.Fatal(err)
		}
		want = append(want, more...)
		if got := r.waitLen(t, len(want)); !slices.Equal(got, want) {
			t.Fatalf("after %s: got %q, want %q", topic, got, want)
		}
	}
	step("t1", "load <nil>", "gated topics/t1", "plain topics/t1")
	step("t2", "gated topics/t2", "plain topics/t2")
	step("t3", "load <nil>", "gated topics/t3", "plain topics/t3")
}
