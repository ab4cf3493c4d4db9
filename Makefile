# multicache — every developer and CI entry point. `make help` lists them.

# The version stamped into the binary (`multicache --version`, the User-Agent) and the tag
# of the image: `git describe`, or v0.0.0-dev where git cannot describe the tree.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
# Image that `docker-build` builds and `build-installer`/`deploy` run. ghcr.io/multicache is
# the project's placeholder registry: push to your own with IMG=registry.example/multicache:tag.
IMG ?= ghcr.io/multicache/multicache:$(VERSION)
# Recipes read IMG from the environment, so that no value can break their quoting.
export IMG
# Linker flags of every build of the operator: stamp VERSION.
LDFLAGS ?= -X github.com/seed0f91f25e/multicache/internal/version.Version=$(VERSION)

# Where tools and the real control-plane binaries go; never committed.
LOCALBIN ?= $(CURDIR)/bin
# envtest finds kube-apiserver and etcd here (the directory KUBEBUILDER_ASSETS names).
K8S_ASSETS ?= $(LOCALBIN)/k8s

## Tool versions (installed with `go install` from the Go module proxy).
CONTROLLER_TOOLS_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.8.2
HELM_VERSION ?= v3.22.0
# The version stamped into the kube-apiserver built from k8s.io/kubernetes; it must match
# the require line of hack/envtest/kube-apiserver/go.mod.
KUBERNETES_VERSION ?= v1.37.1
# KWOK, the fake kubelets of `make run`'s local cluster.
KWOK_VERSION ?= v0.8.0

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
KUBE_APISERVER ?= $(K8S_ASSETS)/kube-apiserver
ETCD ?= $(K8S_ASSETS)/etcd
KUBE_SCHEDULER ?= $(K8S_ASSETS)/kube-scheduler
KUBE_CONTROLLER_MANAGER ?= $(K8S_ASSETS)/kube-controller-manager
KWOK ?= $(K8S_ASSETS)/kwok
# kubectl built from Go modules (`make kubectl`), the version of the control plane.
KUBECTL_BIN ?= $(K8S_ASSETS)/kubectl
# The kubectl recipes run: the one on PATH, else KUBECTL_BIN (built when missing).
KUBECTL ?= $(if $(shell command -v kubectl 2>/dev/null),kubectl,$(KUBECTL_BIN))
# What a recipe that runs kubectl needs first: nothing when kubectl is on PATH.
KUBECTL_DEP = $(filter $(KUBECTL_BIN),$(KUBECTL))

# Flags for `go test`; CI and `make test` run the race detector everywhere.
TEST_FLAGS ?= -race -count=1 -timeout 30m
# Benchmarks: which to run and for how long.
BENCH ?= .
BENCH_TIME ?= 1x

GO ?= go
SHELL := /usr/bin/env bash
.SHELLFLAGS := -o pipefail -ec

.DEFAULT_GOAL := help

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs and the RBAC role from the kubebuilder markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/..." paths="./internal/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: generate
generate: controller-gen ## Generate the DeepCopy methods of the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run gofmt on every module.
	gofmt -l -w $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*')

.PHONY: vet
vet: ## Run go vet on the main module.
	$(GO) vet ./...

.PHONY: verify-fmt
verify-fmt: ## Fail when a Go file is not gofmt-clean.
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: test
test: manifests generate verify-fmt vet envtest-assets kustomize helm kube-controller-manager kwok scheduler ## Run every test (unit, race, real API server).
	$(MAKE) --no-print-directory test-main
	@# The other modules' checks run two at a time (each one's output together): they mostly
	@# wait on API servers, leases and child processes, and take 5 minutes so instead of 8.
	$(MAKE) --no-print-directory -j2 --output-sync=target chaos-check bench-e2e-check bench-differential bench-check \
		example-check scheduler-check

.PHONY: test-main
test-main: ## Run the main module's tests only (the first half of `make test`, without generating or vetting first).
	KUBEBUILDER_ASSETS="$(K8S_ASSETS)" $(GO) test $(TEST_FLAGS) ./...

.PHONY: bench-differential
bench-differential: envtest-assets ## Differential tests of the cache against kube-scheduler's (bench/, under the race detector; one runs a real API server).
	cd bench && KUBEBUILDER_ASSETS="$(K8S_ASSETS)" $(GO) test $(TEST_FLAGS) -run 'TestDifferential' .

.PHONY: example-check
example-check: envtest-assets ## Vet and test the examples (each its own module: out-of-tree, a custom store and sibling; descheduler, a sibling planning on forks) against the real API server.
	for m in examples/out-of-tree examples/descheduler; do \
		(cd $$m && $(GO) vet ./... && KUBEBUILDER_ASSETS="$(abspath $(K8S_ASSETS))" $(GO) test $(TEST_FLAGS) ./...) || exit 1; \
	done

.PHONY: scheduler-check
scheduler-check: envtest-assets kube-controller-manager kwok scheduler ## Vet and test scheduler/ (its own module: kube-scheduler with the multicache plugin); its e2e runs bin/multicache-scheduler against the real API server, kube-controller-manager and KWOK (~1.5 min once built).
	cd scheduler && $(GO) vet ./... && KUBEBUILDER_ASSETS="$(abspath $(K8S_ASSETS))" MULTICACHE_SCHEDULER="$(SCHEDULER_BIN)" \
		$(GO) test $(TEST_FLAGS) -timeout 20m ./...

# How long `make fuzz` explores event sequences against the reference model.
FUZZ_TIME ?= 60s

.PHONY: fuzz
fuzz: ## Fuzz the cache handler against its reference model for FUZZ_TIME (default 60s).
	$(GO) test -run '^$$' -fuzz FuzzModel -fuzztime $(FUZZ_TIME) -fuzzminimizetime 5s ./internal/handler

.PHONY: bench
# The bench module needs nothing but the Go toolchain (no control plane). 1s per standard
# benchmark, then the tables: 5 rounds of fixed iteration counts (see bench/ops.go). About
# 12 minutes on 2 cores; `make bench BENCH_TIME=3s BENCH_ROUNDS=9` for steadier figures.
bench: BENCH_TIME = 1s
bench: BENCH_ROUNDS ?= 5
bench: ## Run the benchmarks (multicache vs kube-scheduler's cache) and print the side-by-side and reaper tables.
	cd bench && $(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCH_TIME) -benchmem -timeout 60m .
	cd bench && $(GO) test -run '^Test(SideBySide|ReaperScaling)$$' -timeout 60m -args -table -table.rounds $(BENCH_ROUNDS)

.PHONY: bench-check
bench-check: ## Check the benchmark module builds and its bodies do what they say (quick, no figures).
	cd bench && $(GO) vet . && $(GO) test -count=1 -skip '^TestDifferential' .
	cd bench/e2e && $(GO) vet ./... && $(GO) test -count=1 -run '^Test(AccountNode|SummariseHolds|ChurnPod_HasThePopulationsShape)$$' .

# Cluster size of `make scale-check`.
SCALE_NODES ?= 1000
SCALE_PODS ?= 30000

.PHONY: scale-check
scale-check: envtest-assets ## Cold-start catch-up time and verify-loop cost at SCALE_NODES/SCALE_PODS through the real API server (minutes; figures in the log).
	MULTICACHE_SCALE_NODES=$(SCALE_NODES) MULTICACHE_SCALE_PODS=$(SCALE_PODS) KUBEBUILDER_ASSETS="$(K8S_ASSETS)" \
		$(GO) test -count=1 -timeout 60m -run '^TestScale_' -v ./internal/operator/

# `make chaos`: faults under load (test/chaos) at full size. The first pass injects every
# kind once, then the random phase goes on for CHAOS_TIME and until CHAOS_MIN_FAULTS faults
# were injected. Sizes: CHAOS_NODES, CHAOS_PODS, CHAOS_RESERVATIONS (base reservations),
# CHAOS_BURST_RESERVATIONS (expiring in the same second), CHAOS_BURST_PODS (deleted at once);
# CHAOS_RATE is the workload's operations per second. CHAOS_RACE=true builds the operators
# with the race detector. Logs and write logs go to CHAOS_OUT, the Markdown report to
# CHAOS_REPORT. CHAOS_STRICT=true also fails on the known defects of docs/RELIABILITY.md.
# test/chaos is a module of its own (like bench/), so `./...` of the main module leaves it
# out; the short version (a few minutes) runs in `make test` through chaos-check.
CHAOS_TIME ?= 10m
CHAOS_MIN_FAULTS ?= 50
CHAOS_NODES ?= 1000
CHAOS_PODS ?= 30000
CHAOS_RESERVATIONS ?= 2000
CHAOS_BURST_RESERVATIONS ?= 10000
CHAOS_BURST_PODS ?= 5000
CHAOS_RATE ?= 100
CHAOS_SEED ?= 1
CHAOS_RACE ?= false
CHAOS_STRICT ?= false
CHAOS_OUT ?= $(LOCALBIN)/chaos
CHAOS_REPORT ?= $(CHAOS_OUT)/report.md

.PHONY: chaos
chaos: envtest-assets ## Faults under load against the real API server: two operator processes, >= CHAOS_MIN_FAULTS faults of every kind (report in CHAOS_REPORT).
	rm -rf "$(CHAOS_OUT)"
	cd test/chaos && CHAOS_LONG=true CHAOS_TIME=$(CHAOS_TIME) CHAOS_MIN_FAULTS=$(CHAOS_MIN_FAULTS) CHAOS_NODES=$(CHAOS_NODES) \
		CHAOS_PODS=$(CHAOS_PODS) CHAOS_RESERVATIONS=$(CHAOS_RESERVATIONS) CHAOS_BURST_RESERVATIONS=$(CHAOS_BURST_RESERVATIONS) \
		CHAOS_BURST_PODS=$(CHAOS_BURST_PODS) CHAOS_RATE=$(CHAOS_RATE) CHAOS_SEED=$(CHAOS_SEED) CHAOS_RACE=$(CHAOS_RACE) \
		CHAOS_STRICT=$(CHAOS_STRICT) CHAOS_OUT="$(CHAOS_OUT)" CHAOS_REPORT="$(CHAOS_REPORT)" KUBEBUILDER_ASSETS="$(K8S_ASSETS)" \
		$(GO) test -count=1 -timeout 6h -run '^TestChaos$$' -v .

.PHONY: chaos-check
chaos-check: envtest-assets ## Vet the chaos module and run its short version (every fault kind once, 3-7 min on 2 shared cores).
	cd test/chaos && $(GO) vet ./... && KUBEBUILDER_ASSETS="$(K8S_ASSETS)" $(GO) test $(TEST_FLAGS) -timeout 20m ./...

# `make bench-e2e`: the cluster size (small: 100 nodes / 3,000 pods; medium: 1,000 / 30,000;
# large: 5,000 / 150,000), the rounds of cold starts, extra flags of bench/e2e/cmd/bench-e2e
# (e.g. BENCH_E2E_ARGS="-churn-rates 100,300 -churn-duration 30s") and the report file.
# DEVICES=1 adds DRA objects: 8 devices per node in a ResourceSlice each, 4 allocated
# ResourceClaims per node, one DeviceClass (large: 40,000 devices, 20,000 claims).
# BENCH_PODS=realistic|synthetic: pods as a running cluster serves them (created by the
# ReplicaSet controller's field manager, status by the kubelet's; the default at large) or
# small ones without status (the default elsewhere). Realistic large needs ~17 GiB for the
# API server alone: on 24 GiB, SIZE=4500/135000 BENCH_PODS=realistic is the largest that fits.
SIZE ?= small
BENCH_PODS ?=
BENCH_E2E_ROUNDS ?= 3
BENCH_E2E_ARGS ?=
DEVICES ?= 0
BENCH_E2E_OUT ?= $(LOCALBIN)/bench-e2e-$(subst /,-,$(SIZE))$(if $(BENCH_PODS),-$(BENCH_PODS))$(if $(filter 1,$(DEVICES)),-devices).md

.PHONY: bench-e2e
bench-e2e: envtest-assets kube-scheduler ## Cold start and pod churn through a real API server: multicache vs a bare informer and kube-scheduler (SIZE=small|medium|large).
	$(GO) build -o $(LOCALBIN)/multicache .
	cd bench/e2e && $(GO) run ./cmd/bench-e2e -size $(SIZE) -rounds $(BENCH_E2E_ROUNDS) -assets "$(K8S_ASSETS)" \
		-multicache "$(LOCALBIN)/multicache" -repo "$(CURDIR)" -out "$(BENCH_E2E_OUT)" $(if $(filter 1,$(DEVICES)),-devices) \
		$(if $(BENCH_PODS),-pods $(BENCH_PODS)) $(BENCH_E2E_ARGS)

# `make bench-holds` (reserve-on-delete end to end): on NODES nodes a Deployment of REPLICAS pods, every one
# annotated multicache.dev/reserve-on-delete, is rolled (maxSurge 25%), scaled to SCALE_TO,
# then FORCE_DELETE of its pods are force-deleted; kube-scheduler binds, kube-controller-manager
# runs the Deployment and ReplicaSet controllers, the harness plays the kubelets. Every node's
# charge in multicache is sampled against the API; the run fails when a sample charged more
# than the live pods and the holds still awaited, or a hold outlived 2 s after a phase ended.
# Extra flags of bench/e2e/cmd/bench-holds in BENCH_HOLDS_ARGS (e.g. "-max-unavailable 0").
BENCH_HOLDS_NODES ?= 50
BENCH_HOLDS_REPLICAS ?= 500
BENCH_HOLDS_SCALE_TO ?= 250
BENCH_HOLDS_FORCE_DELETE ?= 25
BENCH_HOLDS_ARGS ?=
BENCH_HOLDS_OUT ?= $(LOCALBIN)/bench-holds.md

.PHONY: bench-holds
bench-holds: envtest-assets kube-scheduler kube-controller-manager ## Reserve-on-delete end to end: a 500-pod Deployment rolled and scaled down on 50 nodes, each node's charge sampled against live pods + holds still awaited (~1 min).
	$(GO) build -o $(LOCALBIN)/multicache .
	cd bench/e2e && $(GO) run ./cmd/bench-holds -assets "$(K8S_ASSETS)" -kube-scheduler "$(KUBE_SCHEDULER)" \
		-kube-controller-manager "$(KUBE_CONTROLLER_MANAGER)" -multicache "$(LOCALBIN)/multicache" -repo "$(CURDIR)" \
		-nodes $(BENCH_HOLDS_NODES) -replicas $(BENCH_HOLDS_REPLICAS) -scale-to $(BENCH_HOLDS_SCALE_TO) \
		-force-delete $(BENCH_HOLDS_FORCE_DELETE) -out "$(BENCH_HOLDS_OUT)" $(BENCH_HOLDS_ARGS)

# `make bench-scheduler`: the multicache scheduler (bin/multicache-scheduler) against the stock
# kube-scheduler v1.37.1 on the same cluster. Every round each gets a fresh API server and etcd
# with the nodes, is started with the same flags, and places the pods, created at once: pods
# bound per second, p50/p99 creation-to-binding, the scheduler's CPU and settled RSS; after the
# stock scheduler's run, multicache's operator alone (bin/multicache) on the same cluster, for
# the multicache scheduler's RSS against the two run apart. Sizes
# (BENCH_SCHED_SIZE): small 100 nodes / 1,000 pods (~2 min); medium 1,000 / 3,000 (~5 min on 2 cores);
# large 5,000 / 10,000 (~15 min on 2 cores; a quiet machine). NODES,
# PODS and ROUNDS override the size; extra flags of bench/e2e/cmd/bench-scheduler in
# BENCH_SCHED_ARGS (e.g. "-kube-api-qps 0" for kube-scheduler's default client limits).
BENCH_SCHED_SIZE ?= small
BENCH_SCHED_NODES_small = 100
BENCH_SCHED_PODS_small = 1000
BENCH_SCHED_NODES_medium = 1000
BENCH_SCHED_PODS_medium = 3000
BENCH_SCHED_NODES_large = 5000
BENCH_SCHED_PODS_large = 10000
BENCH_SCHED_NODES ?= $(BENCH_SCHED_NODES_$(BENCH_SCHED_SIZE))
BENCH_SCHED_PODS ?= $(BENCH_SCHED_PODS_$(BENCH_SCHED_SIZE))
BENCH_SCHED_ROUNDS ?= 2
BENCH_SCHED_ARGS ?=
BENCH_SCHED_OUT ?= $(LOCALBIN)/bench-scheduler-$(BENCH_SCHED_SIZE).md

.PHONY: bench-scheduler
bench-scheduler: envtest-assets kube-scheduler scheduler ## The multicache scheduler vs kube-scheduler: throughput, p99 creation-to-binding, CPU, settled RSS, and vs kube-scheduler + multicache apart (BENCH_SCHED_SIZE=small|medium|large).
	$(GO) build -o $(LOCALBIN)/multicache .
	cd bench/e2e && $(GO) run ./cmd/bench-scheduler -nodes $(BENCH_SCHED_NODES) -pods $(BENCH_SCHED_PODS) \
		-rounds $(BENCH_SCHED_ROUNDS) -assets "$(K8S_ASSETS)" -scheduler "$(KUBE_SCHEDULER)" \
		-multicache-scheduler "$(SCHEDULER_BIN)" -multicache "$(LOCALBIN)/multicache" -repo "$(CURDIR)" -out "$(BENCH_SCHED_OUT)" $(BENCH_SCHED_ARGS)

# The correctness run of bench-e2e that `make test` keeps: SIZE=small, one round, one churn
# step; kube-scheduler is a subject only when bin/k8s already holds it (it is not built here).
.PHONY: bench-e2e-check
bench-e2e-check: envtest-assets ## Check bench-e2e end to end at SIZE=small: every subject sees every object, the comparison is empty (~1.5 min).
	$(GO) build -o $(LOCALBIN)/multicache .
	cd bench/e2e && $(GO) vet ./... && KUBEBUILDER_ASSETS="$(K8S_ASSETS)" MULTICACHE_BIN="$(LOCALBIN)/multicache" \
		$(GO) test $(TEST_FLAGS) -timeout 10m ./...

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the operator binary into bin/multicache (version VERSION).
	$(GO) build -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/multicache .

# Where install-plugin puts kubectl-multicache: a directory on PATH (kubectl finds plugins there).
PLUGIN_DIR ?= $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)

.PHONY: plugin
plugin: ## Build the kubectl plugin into bin/kubectl-multicache.
	$(GO) build -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/kubectl-multicache ./cmd/kubectl-multicache

.PHONY: install-plugin
install-plugin: ## Install the kubectl plugin (`kubectl multicache nodes`) into PLUGIN_DIR (default: go env GOBIN or GOPATH/bin).
	mkdir -p "$(PLUGIN_DIR)"
	$(GO) build -ldflags "$(LDFLAGS)" -o "$(PLUGIN_DIR)/kubectl-multicache" ./cmd/kubectl-multicache
	@echo "installed $(PLUGIN_DIR)/kubectl-multicache; try: kubectl multicache nodes"

.PHONY: version
version: ## Print the version stamped into binaries and the default image tag.
	@echo $(VERSION)

# A cluster is configured when KUBECONFIG names a file, ~/.kube/config exists, or we run in a pod.
CLUSTER_CONFIGURED = $(or $(and $(KUBECONFIG),$(wildcard $(firstword $(subst :, ,$(KUBECONFIG))))),$(wildcard $(HOME)/.kube/config),$(KUBERNETES_SERVICE_HOST))

# Flags of `make run` before ARGS: metrics (plain HTTP, so `curl 127.0.0.1:8080/metrics`
# works without a token) and probes on localhost only, and logs for a person (the Deployment
# keeps HTTPS metrics for authorized callers and the structured JSON default).
RUN_FLAGS ?= --metrics-bind-address=127.0.0.1:8080 --metrics-secure=false --health-probe-bind-address=127.0.0.1:8081 \
	--zap-encoder=console --zap-time-encoding=iso8601

# `make run` builds the binary and runs it rather than `go run` it: `go run` exits 1 when
# interrupted, so a Ctrl-C would end in make's `Error 1` although the operator stopped cleanly.
.PHONY: run
# What the local cluster runs besides kube-apiserver and etcd (not with ARGS=--local-bare).
LOCAL_CLUSTER_DEPS = $(if $(strip $(CLUSTER_CONFIGURED))$(findstring --local-bare,$(ARGS)),,kube-controller-manager kwok scheduler)

run: manifests generate envtest-assets $(KUBECTL_DEP) $(LOCAL_CLUSTER_DEPS) ## Run the operator: against the configured cluster, or a local cluster (control plane, controllers, the multicache scheduler, fake kubelets).
	$(GO) build -ldflags "$(LDFLAGS)" -o "$(LOCALBIN)/multicache" .
ifeq ($(strip $(CLUSTER_CONFIGURED)),)
	"$(LOCALBIN)/multicache" --local --local-assets="$(K8S_ASSETS)" --local-dir="$(CURDIR)/.local" --local-apply=config/samples $(RUN_FLAGS) $(ARGS)
else
	$(MAKE) install
	$(KUSTOMIZE) build config/samples | $(KUBECTL) apply --server-side -f -
	@# The API server drops status on the main resource: NMNode and CNR samples carry the
	@# agents' measurements, applied through the status subresource.
	$(KUSTOMIZE) build config/samples | $(KUBECTL) apply --server-side --subresource=status -f -
	"$(LOCALBIN)/multicache" $(RUN_FLAGS) $(ARGS)
endif

.PHONY: docker-build
docker-build: ## Build the operator image IMG (needs a Docker engine).
	docker build --build-arg VERSION=$(VERSION) -t $(IMG) .

# An image reference: [host[:port]/]lower-case/path[:tag][@sha256:digest].
IMAGE_REF = ^(([a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+|localhost)(:[0-9]+)?/|[a-zA-Z0-9-]+:[0-9]+/)?[a-z0-9]+([._/-]+[a-z0-9]+)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$$
# Where build-installer writes the single-file install manifest.
INSTALLER ?= $(CURDIR)/dist/install.yaml

.PHONY: build-installer
build-installer: manifests generate kustomize ## Write dist/install.yaml: everything config/default installs, running IMG.
	@if ! printf '%s' "$$IMG" | grep -Eq '$(IMAGE_REF)'; then \
	  echo "IMG=\"$$IMG\" is not an image reference: want e.g. IMG=registry.example/multicache:v0.1.0 (lower-case name, optional :tag and @sha256:digest)" >&2; exit 1; fi
	@# Set the image in a copy of config/, so the committed kustomization stays as it is; a
	@# failed render leaves the previous install.yaml in place.
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; cp -R config "$$tmp/"; \
	  (cd "$$tmp/config/manager" && "$(KUSTOMIZE)" edit set image "controller=$$IMG"); \
	  "$(KUSTOMIZE)" build "$$tmp/config/default" > "$$tmp/install.yaml"; \
	  mkdir -p "$(dir $(INSTALLER))"; mv "$$tmp/install.yaml" "$(INSTALLER)"
	@echo "wrote $(INSTALLER) (image $$IMG)"

##@ Deployment

.PHONY: install
install: manifests kustomize ## Install the CRDs into the configured cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRDs from the configured cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

# Where helm-chart writes the chart.
CHART_DIR ?= $(CURDIR)/dist/chart

.PHONY: helm-chart
helm-chart: manifests kustomize ## Regenerate the Helm chart dist/chart from what config/default renders (commit the result).
	$(KUSTOMIZE) build config/default | $(GO) run ./internal/chartgen -out "$(CHART_DIR)"

.PHONY: deploy
deploy: build-installer ## Deploy the operator (image IMG) into the configured cluster: apply dist/install.yaml.
	$(KUBECTL) apply --server-side -f "$(INSTALLER)"

.PHONY: undeploy
undeploy: kustomize ## Remove the operator from the configured cluster.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: render
render: kustomize ## Render config/default to stdout (what `deploy` applies, with the committed placeholder image).
	$(KUSTOMIZE) build config/default

##@ Tools

$(LOCALBIN) $(K8S_ASSETS):
	mkdir -p $@

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into bin/.
$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install,sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION),controller-gen)

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Install kustomize into bin/.
$(KUSTOMIZE): | $(LOCALBIN)
	$(call go-install,sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION),kustomize)

.PHONY: helm
helm: $(HELM) ## Install helm into bin/ (the tests render dist/chart with it).
$(HELM): | $(LOCALBIN)
	$(call go-install,helm.sh/helm/v3/cmd/helm,$(HELM_VERSION),helm)

.PHONY: envtest-assets
envtest-assets: $(KUBE_APISERVER) $(ETCD) ## Build the real kube-apiserver and etcd into bin/k8s (only when missing).

# The real API server, built from k8s.io/kubernetes through the small module in
# hack/envtest/kube-apiserver (no release download). Takes minutes the first time.
$(KUBE_APISERVER): | $(K8S_ASSETS)
	@echo "building kube-apiserver $(KUBERNETES_VERSION) from Go modules (several minutes on a cold cache)"
	cd hack/envtest/kube-apiserver && $(GO) build -o $@.tmp -ldflags "\
		-X k8s.io/component-base/version.gitVersion=$(KUBERNETES_VERSION) \
		-X k8s.io/component-base/version.gitMajor=$(word 2,$(subst ., ,$(subst v,v ,$(KUBERNETES_VERSION)))) \
		-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBERNETES_VERSION))) \
		-X k8s.io/component-base/version.gitTreeState=clean" . && mv $@.tmp $@

# The real etcd, built from go.etcd.io/etcd/server/v3 through hack/envtest/etcd.
$(ETCD): | $(K8S_ASSETS)
	@echo "building etcd from Go modules"
	cd hack/envtest/etcd && $(GO) build -o $@.tmp . && mv $@.tmp $@

# The version stamped into binaries built from k8s.io/kubernetes (as for kube-apiserver above).
K8S_VERSION_LDFLAGS = \
	-X k8s.io/component-base/version.gitVersion=$(KUBERNETES_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 2,$(subst ., ,$(subst v,v ,$(KUBERNETES_VERSION)))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBERNETES_VERSION))) \
	-X k8s.io/component-base/version.gitTreeState=clean

.PHONY: kube-scheduler
kube-scheduler: $(KUBE_SCHEDULER) ## Build the real kube-scheduler into bin/k8s (only when missing; the anchor of bench-e2e).

# The real kube-scheduler, built from k8s.io/kubernetes through hack/envtest/kube-scheduler
# like kube-apiserver. Under 2 minutes when kube-apiserver's build left the cache warm; from a
# cold cache about 7 CPU-minutes (11 minutes on two cores shared with other work).
$(KUBE_SCHEDULER): | $(K8S_ASSETS)
	@echo "building kube-scheduler $(KUBERNETES_VERSION) from Go modules (minutes on a cold cache)"
	cd hack/envtest/kube-scheduler && $(GO) build -o $@.tmp -ldflags "$(K8S_VERSION_LDFLAGS)" . && mv $@.tmp $@

# The multicache scheduler: kube-scheduler v1.37.1 built from Go modules like the one above,
# with the multicache plugin (scheduler/, a module of its own: the main module never depends
# on k8s.io/kubernetes). Version: kube-scheduler's stamped as in bin/k8s, multicache's VERSION.
SCHEDULER_BIN ?= $(LOCALBIN)/multicache-scheduler

.PHONY: scheduler
scheduler: ## Build the multicache scheduler (kube-scheduler + the multicache plugin) into bin/multicache-scheduler.
	cd scheduler && $(GO) build -ldflags "$(K8S_VERSION_LDFLAGS) $(LDFLAGS)" -o $(SCHEDULER_BIN) ./cmd/multicache-scheduler

.PHONY: kube-controller-manager
kube-controller-manager: $(KUBE_CONTROLLER_MANAGER) ## Build the real kube-controller-manager into bin/k8s (only when missing; the Deployment controller of bench-holds).

# The real kube-controller-manager, built from k8s.io/kubernetes through
# hack/envtest/kube-controller-manager like kube-scheduler.
$(KUBE_CONTROLLER_MANAGER): | $(K8S_ASSETS)
	@echo "building kube-controller-manager $(KUBERNETES_VERSION) from Go modules (minutes on a cold cache)"
	cd hack/envtest/kube-controller-manager && $(GO) build -o $@.tmp -ldflags "$(K8S_VERSION_LDFLAGS)" . && mv $@.tmp $@

.PHONY: kwok
kwok: $(KWOK) ## Build KWOK (fake kubelets for make run's local cluster) into bin/k8s (only when missing).

$(KWOK): | $(K8S_ASSETS)
	@echo "building kwok $(KWOK_VERSION) from Go modules (minutes on a cold cache)"
	GOBIN=$(K8S_ASSETS) $(GO) install sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)

.PHONY: kubectl
kubectl: $(KUBECTL_BIN) ## Build kubectl (the control plane's Kubernetes version) from Go modules into bin/k8s (only when missing; make run does when none is on PATH).

# The real kubectl, built from k8s.io/kubectl through hack/envtest/kubectl (no release
# download): the client of the same version as the control plane of `make run`.
$(KUBECTL_BIN): | $(K8S_ASSETS)
	@echo "building kubectl $(KUBERNETES_VERSION) from Go modules (a few minutes on a cold cache)"
	cd hack/envtest/kubectl && $(GO) build -o $@.tmp -ldflags "$(K8S_VERSION_LDFLAGS)" . && mv $@.tmp $@

# go-install installs $(1)@$(2) into $(LOCALBIN) as $(3)-$(2) and links $(3) to it.
define go-install
@set -e; echo "installing $(1)@$(2)"; \
GOBIN=$(LOCALBIN) $(GO) install $(1)@$(2); \
mv -f $(LOCALBIN)/$(3) $(LOCALBIN)/$(3)-$(2); \
ln -sf $(3)-$(2) $(LOCALBIN)/$(3)
endef
