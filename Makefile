# clustersync — see README.md. The two commands a newcomer needs:
#   make run    the main job: a local host cluster, virtual cluster "demo", a workload on it
#   make test   every test (unit and integration, against real API servers),
#               then a short fault-injection run (make chaos), a short
#               conformance run (make conformance) and a short run of each
#               fuzz target (make fuzz)

GO        ?= go
BIN       := bin/clustersync
# Integration packages start their own API servers; on 2 cores run at most two at once.
TEST_P    ?= 2
TEST_ARGS ?=
# The longest package (test/e2e, about 15 minutes) goes first, so that it
# runs beside the others instead of after them; go test prints results in
# this order, so the others' lines appear when it ends.
TEST_FIRST := ./test/e2e/
ARGS      ?=
BENCH_ARGS ?=

.PHONY: release all build binaries run-binaries conformance-binaries test unit run bench bench-vcluster crds fmt vet clean image fuzz chaos conformance flake

all: build

# Kubernetes, etcd and kwok binaries, built once per machine into
# $(CLUSTERSYNC_CACHE) (default ~/.cache/clustersync), skipped when present:
# binaries is everything make test needs, run-binaries only what the demo
# (make run) needs — not the +k3s1 kube-apiserver of the K3s tests nor
# controller-gen.
binaries:
	@hack/build-binaries.sh

run-binaries:
	@hack/build-binaries.sh run

# binaries, plus the Kubernetes end-to-end suite, kubectl, and the programs
# and Debian userlands of the conformance tests' images (make conformance).
conformance-binaries:
	@hack/build-binaries.sh conformance

# The version and commit `clustersync version` prints and the charts and
# images default to (internal/version): VERSION=v0.2.0 for a release, dev
# otherwise; COMMIT the checkout's revision.
VERSION ?= dev
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
LDFLAGS := -X github.com/clustersync/clustersync/internal/version.version=$(VERSION)$(if $(COMMIT), -X github.com/clustersync/clustersync/internal/version.commit=$(COMMIT))

# Static and -trimpath, as the clustersync image's binary is built
# (internal/images.GoBuild, with the same -X flags: version.LDFlags): the
# image build then reuses every compiled package and only links.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/clustersync

test: binaries build
	$(GO) vet ./...
	$(GO) test -p $(TEST_P) -count=1 -timeout 25m $(TEST_ARGS) $(TEST_FIRST) ./...
	@$(MAKE) --no-print-directory chaos CHAOS_OBJECTS=300 CHAOS_SYNCER_KILLS=3 CHAOS_POD_DELETES=1 CHAOS_APISERVER_RESTARTS=1
	@$(MAKE) --no-print-directory conformance CONFORMANCE_FOCUS='$(CONFORMANCE_SHORT)'
	@$(MAKE) --no-print-directory fuzz FUZZTIME=20000x

# Catches a flaky test before it lands: runs the packages whose tests start
# clusters, API servers or a browser FLAKE_RUNS times in a row, as make test
# runs them (-p $(TEST_P), -count=1), and reports every failure with its
# package and test; a failed test's output is saved in bin/flake/
# (hack/flake). FLAKE_PKGS picks the packages, e.g.
#   make flake FLAKE_RUNS=10 FLAKE_PKGS='./internal/hostcluster/ ./internal/dashboard/'
FLAKE_RUNS ?= 10
FLAKE_PKGS ?=
flake: binaries build
	$(GO) run ./hack/flake -runs $(FLAKE_RUNS) -p $(TEST_P) $(FLAKE_PKGS)

# The fault-injection suite (test/chaos): a seeded churn of CHAOS_OBJECTS
# creates, with updates, deletes and host-side edits, of pods, services,
# secrets and config maps in a virtual cluster on the local real node, while
# the syncer is SIGKILLed, the control plane pod deleted and the host
# kube-apiserver restarted; then host == the syncer's translation of the
# virtual objects and nothing lost; one summary line. It takes the machine's
# real node (root), so it runs on its own, never beside test/e2e inside
# go test ./...; make test runs a short one. CHAOS_SEED repeats a run.
CHAOS_OBJECTS ?= 5000
CHAOS_SYNCER_KILLS ?= 20
CHAOS_POD_DELETES ?= 2
CHAOS_APISERVER_RESTARTS ?= 2
CHAOS_SEED ?=
chaos: binaries
	CLUSTERSYNC_CHAOS=1 CLUSTERSYNC_CHAOS_OBJECTS=$(CHAOS_OBJECTS) CLUSTERSYNC_CHAOS_SYNCER_KILLS=$(CHAOS_SYNCER_KILLS) \
		CLUSTERSYNC_CHAOS_POD_DELETES=$(CHAOS_POD_DELETES) CLUSTERSYNC_CHAOS_APISERVER_RESTARTS=$(CHAOS_APISERVER_RESTARTS) \
		$(if $(CHAOS_SEED),CLUSTERSYNC_CHAOS_SEED=$(CHAOS_SEED)) \
		$(GO) test -count=1 -v -timeout 90m -run '^TestChaos$$' ./test/chaos

# The Kubernetes conformance suite (test/conformance, docs/conformance.md):
# the [Conformance] specs of the v1.37.0 end-to-end binary, run against
# virtual cluster "conformance" on the local real node, after `dev up` and
# `dev image --conformance` (the images the specs pull, built without
# Docker). It prints passed / failed / skipped with each failure's first
# line; the JUnit report and the e2e log land in bin/conformance/PROFILE.
# CONFORMANCE_FOCUS (a regexp) picks some of the [Conformance] specs,
# CONFORMANCE_PARALLEL runs them in that many processes (ginkgo -p; the
# [Serial] ones run alone at the end), CONFORMANCE_PROFILE=defaults runs it with that file's
# nodes, scheduler and storage but clustersync's secure default policies (the file without
# its policies: key), to see what those policies stop. The full run takes
# hours on 2 cores; make test runs a short focused one. It takes the
# machine's real node, so it never runs beside test/e2e.
CONFORMANCE_FOCUS ?=
# The short run of make test: API discovery, ConfigMap and Secret volumes,
# Secrets in the environment, Service environment variables, a Service's
# endpoints, DNS, the API server's own endpoints, an ephemeral container
# (the chart's RBAC), a pod the virtual scheduler places by a label only
# the node's virtual copy has, a pod certificate, a Service changed to
# ExternalName (about 3 minutes after dev up and the images).
CONFORMANCE_SHORT := SchedulerPredicates validates that NodeSelector is respected if matching|should issue certificate with default life time|change the type from ClusterIP to ExternalName|Ephemeral Containers will start an ephemeral container|Discovery should validate PreferredVersion|ConfigMap should be consumable from pods in volume \[|Secrets should be consumable from pods in volume \[|Secrets should be consumable via the environment|Pods should contain environment variables for services|Services should serve a basic endpoint from pods|DNS should provide DNS for services|API Server should have Endpoints and EndpointSlices
CONFORMANCE_PARALLEL ?= 1
# CONFORMANCE_SERIAL=skip leaves the [Serial] specs out, =only runs only them.
CONFORMANCE_SERIAL ?=
CONFORMANCE_PROFILE ?= conformance
conformance: conformance-binaries
	CLUSTERSYNC_CONFORMANCE=1 CLUSTERSYNC_CONFORMANCE_FOCUS='$(CONFORMANCE_FOCUS)' \
		CLUSTERSYNC_CONFORMANCE_PARALLEL=$(CONFORMANCE_PARALLEL) CLUSTERSYNC_CONFORMANCE_PROFILE=$(CONFORMANCE_PROFILE) \
		CLUSTERSYNC_CONFORMANCE_SERIAL='$(CONFORMANCE_SERIAL)' \
		$(GO) test -count=1 -v -timeout 8h -run '^TestConformance$$' ./test/conformance

# Go's native fuzzing: each fuzz target runs for FUZZTIME inputs (go test
# fuzzes one target per run). A count, not a duration: Go 1.26's coordinator
# can fail a run that only reached a -fuzztime duration with "context
# deadline exceeded" (go.dev/issue/75804, fixed in Go 1.27); a count has no
# deadline to race. Their seed corpora (testdata/fuzz/) run in every go test
# anyway. A new input is minimized for at most FUZZMINIMIZETIME (go test's
# 60s stalls on variants of the large YAML seeds).
FUZZTIME ?= 200000x
FUZZMINIMIZETIME ?= 2s
FUZZ_TARGETS := FuzzHostNames:./internal/virtual/translate FuzzLabels:./internal/virtual/translate \
	FuzzParse:./internal/virtual/config FuzzPath:./internal/virtual/patches
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		fn=$${t%%:*}; pkg=$${t#*:}; \
		echo "$(GO) test -run '^\$$' -fuzz '^$$fn\$$' -fuzztime $(FUZZTIME) $$pkg"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg; \
	done

# clustersync's images (clustersync, pause, local-path-helper, demo-app), built without Docker
# and pushed to the local registry of `bin/clustersync dev up`, or to
# IMAGE_REPO (e.g. ghcr.io/me) when set. The static control-plane binaries
# the clustersync image holds are built once into the cache first.
IMAGE_REPO ?=
image: build
	@hack/build-binaries.sh static
	$(BIN) dev image $(if $(IMAGE_REPO),--repo $(IMAGE_REPO))

# A release into dist/ (`clustersync dev release`, internal/release): the
# CLI for Linux and macOS on amd64 and arm64, static and reproducible, each
# with a CycloneDX SBOM of its Go modules, the charts stamped with the
# version, and dist/checksums.txt; the charts (as OCI artifacts) and every
# image (clustersync, busybox, pause, local-path-helper, demo-app; each one
# tag for linux/amd64 and arm64, checked after the push) are pushed to
# IMAGE_REPO, by default the local registry of `bin/clustersync dev up`.
# VERSION is required (make release VERSION=v0.2.0). The first run
# cross-compiles the arm64 control plane (hack/build-binaries.sh release,
# 15-25 minutes on 2 cores; docs/development.md, "Cutting a release").
release: build
	@hack/build-binaries.sh release
	$(BIN) dev release --version $(VERSION) --commit $(COMMIT) --out dist $(if $(IMAGE_REPO),--repo $(IMAGE_REPO))

# Tests that need no API servers (-short skips the others).
unit:
	$(GO) test -count=1 -short ./...

run: run-binaries build
	$(BIN) demo $(ARGS)

# The virtual-cluster syncer, then the hosted-cluster controllers (200 EKS,
# 200 AKS, then 200 GKE clusters against the emulators, and one table of the
# three; HOSTED_BENCH_ARGS go to it), then the local
# real node (dev up to the first pod Running, make run) and the image sizes,
# then one patch expression and one Pod Security check (ns, bytes, allocs),
# then the dashboard's clusters page of 200 clusters (server time, bytes),
# then bench-vcluster.
HOSTED_BENCH_ARGS ?=
bench: binaries build
	$(GO) run ./test/bench $(BENCH_ARGS)
	$(GO) run ./test/bench/hosted $(HOSTED_BENCH_ARGS)
	$(GO) run ./test/bench/realnode
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2000x ./internal/virtual/patches/ ./internal/virtual/policy/
	$(GO) test -run '^$$' -bench . -benchtime 20x ./internal/dashboard/
	$(GO) test -run '^$$' -bench . -benchtime 200x ./internal/registered/
	$(MAKE) bench-vcluster

# clustersync's virtual cluster and vCluster's side by side on one local
# host, one table (test/bench/vcluster). It builds vCluster (VCLUSTER_VERSION)
# from the Go module proxy into the cache the first time (10 to 20 minutes on
# 2 cores), then takes about 12 minutes. VCLUSTER_BENCH_ARGS go to it
# (-n, -replicas, -idle-after, -only, -clustersync-set; -h lists them).
VCLUSTER_VERSION ?= v0.36.1
VCLUSTER_BENCH_ARGS ?=
bench-vcluster: binaries build
	$(GO) run ./test/bench/vcluster -vcluster $(VCLUSTER_VERSION) $(VCLUSTER_BENCH_ARGS)

# controller-gen (built once into the cache by hack/build-binaries.sh unless
# CLUSTERSYNC_CONTROLLER_GEN_BIN names one) writes the deepcopy functions of
# api/ (zz_generated.deepcopy.go) and the CRDs in config/crd/ from the Go
# types and their kubebuilder markers. Commit what it writes. Old CRD files
# are removed first, so a renamed kind leaves none behind (config/crd embeds
# every *.yaml).
CONTROLLER_GEN = $(or $(CLUSTERSYNC_CONTROLLER_GEN_BIN),$(shell hack/build-binaries.sh --print-env | sed -n 's/^export CLUSTERSYNC_CONTROLLER_GEN_BIN=//p'))

.PHONY: generate
generate:
	@[ -n "$(CLUSTERSYNC_CONTROLLER_GEN_BIN)" ] || hack/build-binaries.sh controller-gen
	$(CONTROLLER_GEN) object paths=./api/...
	@$(MAKE) --no-print-directory crds

# The CRD half of generate: config/crd (embedded in the binary) and the
# same files in charts/manager/crds (Helm installs them before the chart).
crds:
	@[ -n "$(CLUSTERSYNC_CONTROLLER_GEN_BIN)" ] || hack/build-binaries.sh controller-gen
	rm -f config/crd/*.clustersync.io_*.yaml
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd
	rm -f charts/manager/crds/*.yaml
	cp config/crd/*.clustersync.io_*.yaml charts/manager/crds/

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

clean:
	rm -rf bin
