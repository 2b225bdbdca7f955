# Build, test and run the federation control plane and its member-cluster
# test environment. `make help` lists the targets.

GO        ?= go
N         ?= 3
NODES     ?= 2
RUN_DIR   ?= $(CURDIR)/.run/members
FED       ?= federation
# make demo keeps everything (members, federation, kubeconfig) under one folder.
DEMO_DIR  ?= $(CURDIR)/.run/demo
# The e2e suites start real clusters: keep one package at a time on small machines.
TEST_FLAGS ?= -count=1 -p 1 -timeout 50m

.PHONY: help build image release tools test test-unit conformance faults lint manifests bench bench-karmada bench-apiserver bench-dns run stop up down demo demo-down clean distclean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# The federation's version in every binary (pkg/version): git describe, commit, build date.
VERSION_LDFLAGS := $(shell hack/version-ldflags.sh)

build: ## build every binary of the project into bin/
	$(GO) build -ldflags "$(VERSION_LDFLAGS)" -o bin/ ./federation-apiserver ./federation-controller-manager ./federation-agent ./kubefed ./test/cmd/memberenv
	$(GO) build -ldflags "$(VERSION_LDFLAGS)" -o bin/federation-dns ./dns
	$(GO) build -o bin/etcd go.etcd.io/etcd/server/v3

# The image and the release archives hold static binaries (CGO off,
# -trimpath, the last commit's time as build date) built into _output/.
IMAGE     ?= localhost/federation

image: ## build the container image localhost/federation:VERSION (and :dev) with podman: FROM scratch, the six static binaries, user 65532
	@IMAGE=$(IMAGE) GO=$(GO) build/image.sh

release: ## cross-build the release archives (kubefed: linux, darwin x amd64, arm64; the control plane: linux) and SHA256SUMS into _output/release/VERSION/
	@GO=$(GO) hack/release.sh

tools: build ## build (once) and cache etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and helm
	bin/memberenv build

# Packages whose workers share state: their unit tests also run under the
# race detector (a concurrent map access once killed the controller manager).
RACE_PACKAGES ?= ./pkg/controllers/propagation/... ./pkg/controllers/customresources/ ./pkg/membercluster/ ./pkg/queueworker/

# The e2e suites run the binaries `make build` (under tools) just made,
# rather than each package linking its own (test/fedenv's FEDENV_BIN).
E2E_BIN = FEDENV_BIN=$(CURDIR)/bin

test: lint tools ## lint, then the whole suite: unit (the concurrent packages also under -race), integration and e2e
	$(GO) test -race -count=1 -short $(RACE_PACKAGES)
	$(E2E_BIN) $(GO) test $(TEST_FLAGS) ./...

test-unit: ## run only the fast tests (no clusters)
	$(GO) test -count=1 -short ./...

# make conformance FOCUS='<ginkgo regexp>' runs other conformance tests
# instead, printing how each fares without judging them.
conformance: tools ## Kubernetes' conformance tests for the served types (e2e.test built once) against a federation with 3 members
	$(E2E_BIN) CONFORMANCE_FOCUS='$(FOCUS)' $(GO) test -count=1 -timeout 40m -v -run '^TestConformance' ./test/e2e/conformance/

faults: tools ## the fault matrix (docs/reliability.md): an HA federation, 3 members, six faults; table in .run/faults/results.md
	$(E2E_BIN) $(GO) test -count=1 -timeout 30m -v -run '^TestFaultMatrix$$' ./test/e2e/faults/

# make bench: member cluster counts, one federation each (1,3,6,10), and the
# scenarios (burst,delete,steady,deployments; scale only when named: the
# object-count axis, SCALE_OBJECTS federated objects over 3 members whatever
# CLUSTERS says; members only when named: the member-count axis, MEMBERS
# API-only members, one federation each, whatever CLUSTERS says).
CLUSTERS  ?= 1,3
SCENARIOS ?= burst,delete,steady,deployments
STEADY    ?= 60s
# Rounds of burst and delete (reference then federation each time): medians.
ROUNDS    ?= 3
SCALE_OBJECTS ?= 10000,50000
MEMBERS ?= 10,25,50

# The figures go to propagation.json, or to scale.json, agent.json or
# members.json when only optional scenarios run (the first of agent,
# members, scale named), so that a full run's figures stay.
comma := ,
BENCH_SCENARIOS = $(subst $(comma), ,$(SCENARIOS))
BENCH_OUT = $(or $(if $(filter-out scale agent members,$(BENCH_SCENARIOS)),propagation),$(firstword $(filter agent,$(BENCH_SCENARIOS)) $(filter members,$(BENCH_SCENARIOS)) scale)).json

bench: tools ## propagation to CLUSTERS=1,3 members against writing straight to them; table + .run/bench/propagation.json
	$(GO) test ./test/benchmark/propagation -run '^$$' -bench . -benchtime 1x -timeout 0 \
	  -args -clusters=$(CLUSTERS) -scenarios=$(SCENARIOS) -steady-duration=$(STEADY) -rounds=$(ROUNDS) -scale-objects=$(SCALE_OBJECTS) -members=$(MEMBERS) -out=$(CURDIR)/.run/bench/$(BENCH_OUT)

# make bench-karmada: the federation and Karmada side by side on the same 3
# members (docs/performance.md, "Karmada side by side"). Nothing of Karmada is
# in this repository: check out its source (KARMADA_SRC: its CRDs and webhook
# configurations are read from there) and build its programs into KARMADA_BIN.
KARMADA_SCENARIOS ?= burst,steady,deployments,cost
KARMADA_OBJECTS   ?= 10000
# Extra flags of karmada-controller-manager and karmada-scheduler (e.g.
# --kube-api-qps=400); none by default.
KARMADA_CM_FLAGS    ?=
KARMADA_SCHED_FLAGS ?=

# Without KARMADA_BIN and KARMADA_SRC it says what to build before building the tools.
bench-karmada: $(if $(and $(KARMADA_BIN),$(KARMADA_SRC)),tools) ## the federation against Karmada on 3 members (KARMADA_BIN=... KARMADA_SRC=...); table + .run/bench/karmada.json
	@if [ -z "$(KARMADA_BIN)" ] || [ -z "$(KARMADA_SRC)" ]; then \
	  echo "bench-karmada: set KARMADA_SRC to a Karmada checkout (v1.18.2) and KARMADA_BIN to a folder with its programs"; \
	  echo "  aggregated-apiserver, controller-manager, scheduler and webhook, built from that checkout (docs/performance.md)"; \
	  exit 2; fi
	$(GO) test ./test/benchmark/propagation -run '^$$' -bench '^BenchmarkKarmada$$' -benchtime 1x -timeout 0 \
	  -args -karmada-bin=$(abspath $(KARMADA_BIN)) -karmada-src=$(abspath $(KARMADA_SRC)) -karmada-scenarios=$(KARMADA_SCENARIOS) \
	  -karmada-cost-objects=$(KARMADA_OBJECTS) -karmada-controller-manager-flags="$(KARMADA_CM_FLAGS)" -karmada-scheduler-flags="$(KARMADA_SCHED_FLAGS)" \
	  -steady-duration=$(STEADY) -out=$(CURDIR)/.run/bench/karmada.json

bench-apiserver: tools ## federation-apiserver against kube-apiserver: throughput, p50/p99 and ratios
	$(GO) test ./test/benchmark/apiserver -run '^$$' -bench . -benchtime 1x

bench-dns: tools ## federation-dns: queries/s and p99 against an in-memory server; member endpoint change to DNS answer
	$(GO) test ./test/integration/dns ./test/e2e/dns -run '^$$' -bench . -benchtime 1x

# kubefed runs on people's machines: it must build for macOS and arm64 too.
KUBEFED_PLATFORMS ?= darwin/amd64 darwin/arm64 linux/arm64

manifests: ## render deploy/manifests/ from the Helm chart deploy/charts/federation
	hack/update-manifests.sh

lint: ## gofmt, go vet, docs (links, anchors, layout), generated code and deploy/manifests up to date, kubefed builds for $(KUBEFED_PLATFORMS)
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 ./hack/docscheck/
	hack/verify-codegen.sh
	hack/update-manifests.sh --verify
	@for p in $(KUBEFED_PLATFORMS); do \
	  echo "GOOS=$${p%/*} GOARCH=$${p#*/} go build ./kubefed"; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -o /dev/null ./kubefed || exit 1; \
	done

DNS_ZONE  ?= example.com.

run: build ## start a local federation $(FED) with DNS for $(DNS_ZONE) (kubeconfig context $(FED)); again: it is started if stopped
	@if [ -f "$(HOME)/.federation/$(FED)/federation.json" ]; then \
	  bin/kubefed start $(FED); \
	else \
	  bin/kubefed init $(FED) --local --dns-provider=coredns --dns-zone-name=$(DNS_ZONE); \
	fi

stop: ## stop the federation started by make run (its data stays in ~/.federation/$(FED))
	@bin/kubefed stop $(FED)

up: tools ## start N member clusters (N=3 NODES=2); prints export KUBECONFIG=... last
	@bin/memberenv up --dir=$(RUN_DIR) --clusters=$(N) --nodes=$(NODES)

down: ## stop the member clusters started by make up
	@if [ -x bin/memberenv ]; then bin/memberenv down --dir=$(RUN_DIR); fi

demo: tools ## member clusters + a federation joined to all of them, in $(DEMO_DIR)
	@bin/memberenv up --dir=$(DEMO_DIR)/members --clusters=$(N) --nodes=$(NODES) >/dev/null
	@export KUBECONFIG=$(DEMO_DIR)/members/kubeconfig; \
	  bin/kubefed init $(FED) --local --data-dir=$(DEMO_DIR)/federation --dns-provider=coredns --dns-zone-name=$(DNS_ZONE) && \
	  for i in $$(seq 1 $(N)); do bin/kubefed join cluster$$i --context=$(FED) || exit 1; done && \
	  kubectl --context=$(FED) wait --for=condition=Ready clusters --all --timeout=60s >/dev/null && \
	  kubectl --context=$(FED) get clusters && \
	  echo "export KUBECONFIG=$$KUBECONFIG"

demo-down: ## stop what make demo started
	@if [ -x bin/kubefed ]; then KUBECONFIG=$(DEMO_DIR)/members/kubeconfig bin/kubefed delete $(FED) --local --data-dir=$(DEMO_DIR)/federation || true; fi
	@if [ -x bin/memberenv ]; then bin/memberenv down --dir=$(DEMO_DIR)/members; fi

clean: down demo-down ## remove build output and run folders (keeps the cached tool binaries)
	rm -rf bin .run

distclean: clean ## also remove the cached tool binaries
	rm -rf .cache
