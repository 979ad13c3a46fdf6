# Samsa build and test targets. The README's commands call these; .ci/run calls `make ci`.
GO        ?= go
PKGS      ?= ./...
# Packages that start goroutines run under the race detector (STYLE S11.9).
RACE_PKGS ?= ./broker/... ./controller/... ./zkutil/... ./tools/...
TIMEOUT   ?= 15m
# The fault tests (broker/clustertest, process harness) spend most of their time waiting for
# sessions to expire and leaders to move, so they run in their own `go test` process
# beside the other passes instead of after them. Their brokers are child processes
# built without -race, so the race pass skips them: under the race detector they would
# only check the test's own client goroutines again, at the cost of minutes.
FAULT_TESTS ?= ^TestCluster(Fault|Fenced)

.PHONY: build test test-race test-short vet fmt-check tidy-check generate-check fuzz bench ci deps graph filemap

build:
	$(GO) build -o .build/samsa ./tools/samsa

# deps installs what the tests need on a fresh Debian machine (ZooKeeper, kcat, kafka-python).
deps:
	bash .ci/install-deps.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

tidy-check:
	cp go.mod /tmp/samsa-go.mod.bak && cp go.sum /tmp/samsa-go.sum.bak
	$(GO) mod tidy
	@if ! diff -q go.mod /tmp/samsa-go.mod.bak >/dev/null || ! diff -q go.sum /tmp/samsa-go.sum.bak >/dev/null; then \
		cp /tmp/samsa-go.mod.bak go.mod; cp /tmp/samsa-go.sum.bak go.sum; echo "go.mod/go.sum not tidy"; exit 1; fi

generate-check:
	$(GO) generate ./...
	@git diff --exit-code -- docs/ || (echo "generated files are stale: run go generate ./..."; exit 1)

# test is the README's test command: static checks, then every test once, the concurrent
# packages under the race detector.
# The fault tests' output goes to .build/fault-tests.log and is printed when they end.
test: fmt-check vet build
	@mkdir -p .build; \
	$(GO) test -count=1 -timeout $(TIMEOUT) -run '$(FAULT_TESTS)' ./broker/clustertest/ > .build/fault-tests.log 2>&1 & fault=$$!; \
	$(GO) test -count=1 -p 2 -timeout $(TIMEOUT) -skip '$(FAULT_TESTS)' $(PKGS) && \
	$(GO) test -race -count=1 -p 2 -timeout $(TIMEOUT) -skip '$(FAULT_TESTS)' $(RACE_PKGS); rc=$$?; \
	wait $$fault; frc=$$?; echo "== fault tests (./broker/clustertest/ -run '$(FAULT_TESTS)'), exit $$frc:"; cat .build/fault-tests.log; \
	[ $$rc -eq 0 ] && [ $$frc -eq 0 ]

test-short:
	$(GO) test -count=1 -short -timeout $(TIMEOUT) $(PKGS)

# fuzz runs every Fuzz target for FUZZTIME each.
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# graph prints the package graph (each package, its non-test+test file counts, the Samsa
# packages it imports, [kmsg] where it imports kmsg); docs/design.md §1 keeps issue 19's before/after.
graph:
	@bash bin/samsa-package-graph.sh

# filemap rewrites docs/design.md's generated file map (§3) from the tree; TestLintFileMap checks it.
filemap:
	$(GO) run ./tools/lint/cmd/filemap

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./broker/storage/ ./broker/record/

ci: deps test compat-sarama-core

# Sarama's functional test suite against a local five-broker cluster (issue 9,
# docs/compatibility.md). compat-sarama-core is the CI wave (a few minutes);
# compat-sarama runs everything that works without docker.
.PHONY: compat-sarama compat-sarama-core
compat-sarama:
	bash bin/samsa-compat-sarama.sh

compat-sarama-core:
	bash bin/samsa-compat-sarama.sh --core

# The reliability harness (issue 17, docs/reliability.md): brokers and a 3-server
# ZooKeeper ensemble in network namespaces under seeded faults, with a history
# checker. Needs root. chaos-short is the CI run (under 4 minutes); chaos is the long
# matrix (100 cycles, about 35-40 minutes on 2 cores).
CHAOS_SEED ?= 1
.PHONY: chaos chaos-short
chaos-short:
	bash bin/samsa-chaos.sh --short --seed $(CHAOS_SEED)

chaos:
	bash bin/samsa-chaos.sh --cycles 100 --seed $(CHAOS_SEED)
