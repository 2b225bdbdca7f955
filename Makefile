# Build, test and run the federation control plane and its member-cluster
# test environment. `make help` lists the targets.

GO        ?= go
N         ?= 3
NODES     ?= 2
RUN_DIR   ?= $(CURDIR)/.run/members
# The e2e suites start real clusters: keep one package at a time on small machines.
TEST_FLAGS ?= -count=1 -p 1 -timeout 50m

.PHONY: help build tools test test-unit lint up down clean distclean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build every binary of the project into bin/
	$(GO) build -o bin/ ./...

tools: build ## build (once) and cache etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
	bin/memberenv build

test: lint tools ## lint, then the whole suite: unit, integration and e2e
	$(GO) test $(TEST_FLAGS) ./...

test-unit: ## run only the fast tests (no clusters)
	$(GO) test -count=1 -short ./...

lint: ## gofmt, go vet
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

up: tools ## start N member clusters (N=3 NODES=2); prints export KUBECONFIG=... last
	@bin/memberenv up --dir=$(RUN_DIR) --clusters=$(N) --nodes=$(NODES)

down: ## stop the member clusters started by make up
	@if [ -x bin/memberenv ]; then bin/memberenv down --dir=$(RUN_DIR); fi

clean: down ## remove build output and run folders (keeps the cached tool binaries)
	rm -rf bin .run

distclean: clean ## also remove the cached tool binaries
	rm -rf .cache
