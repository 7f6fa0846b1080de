#!/usr/bin/env bash
# Builds the binaries clustersync's local clusters run, from pinned Go module
# versions, into a cache outside the clone that is keyed by version:
#
#   $CLUSTERSYNC_CACHE/etcd-v3.7.0/etcd
#   $CLUSTERSYNC_CACHE/kubernetes-v1.37.0-static/{kube-apiserver,kube-controller-manager,kube-scheduler}
#       statically linked (CGO_ENABLED=0, as Kubernetes releases them): the
#       local clusters run them, and the clustersync image holds them.
#   $CLUSTERSYNC_CACHE/kwok-v0.8.0/{kwok,kwokctl}
#   $CLUSTERSYNC_CACHE/controller-gen-v0.23.0/controller-gen   (make generate)
#   $CLUSTERSYNC_CACHE/node-containerd-v2.4.2-cni-v1.9.1/{containerd,containerd-shim-runc-v2,cni/*}
#   $CLUSTERSYNC_CACHE/kubernetes-v1.37.0-node/{kubelet,kube-proxy}
#   $CLUSTERSYNC_CACHE/local-path-provisioner-v0.0.30/local-path-provisioner
#   $CLUSTERSYNC_CACHE/metrics-server-v0.9.0/metrics-server
#   $CLUSTERSYNC_CACHE/busybox-static-1.35.0/busybox
#       the local real node's runtime, CNI plugins, kubelet, kube-proxy, storage provisioner
#       and resource metrics API (kubectl top), and Debian's busybox-static (downloaded,
#       not installed), the image of the rewrite-hosts init container of StatefulSet pods;
#       the default and `node` build them and install Debian's runc and iptables when missing;
#       the default (make test) also installs Debian's chromium when missing (the dashboard's
#       browser tests drive it headless).
#   $CLUSTERSYNC_CACHE/kubernetes-v1.37.0-static-arm64/{kube-apiserver,kube-controller-manager,kube-scheduler}
#   $CLUSTERSYNC_CACHE/busybox-static-1.35.0-arm64/busybox
#       the same for linux/arm64 (cross-compiled; Debian's arm64 package), for the arm64
#       half of the clustersync and busybox images of a release (make release).
#   $CLUSTERSYNC_CACHE/qemu-user-static-debian12/qemu-aarch64-static
#       Debian's arm64 user-mode emulator (downloaded, not installed): make release starts
#       the arm64 images' programs under it.
#   $CLUSTERSYNC_CACHE/kubernetes-v1.37.0-e2e/{e2e.test,ginkgo,kubectl,agnhost,nonewprivs,sample-apiserver,etcd,files/}
#   $CLUSTERSYNC_CACHE/conformance-userland-debian12-v4/{busybox,agnhost,nginx,glibc-dns-testing}/
#       the Kubernetes end-to-end test binary, the ginkgo command that runs it in
#       parallel, kubectl (the [sig-cli] tests call it), the Go programs of the
#       conformance tests' images and the files those images carry, and the
#       Debian userlands of the others (hack/conformance-rootfs.sh):
#       make conformance (test/conformance), internal/images.Conformance.
#
# CLUSTERSYNC_CACHE defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/clustersync.
# A folder that is already complete is skipped, so a warm machine builds
# nothing. Each step says how long it usually takes on 2 cores and how long it
# took. Usage: hack/build-binaries.sh [--print-env|run|controller-gen|static|node|release|conformance]
#   (none)          everything below but release's arm64 binaries: what `make test`
#                   needs (qemu-aarch64-static included: internal/release starts arm64
#                   programs under it).
#   run             what `make run` (the demo) needs: etcd, the static control plane,
#                   kwok, and the real node; not metrics-server (kubectl top), the
#                   +k3s1 relink or controller-gen, which only tests and `make generate` use.
#   --print-env     print only the CLUSTERSYNC_*_BIN variables, as shell exports.
#   controller-gen  build only controller-gen (what `make generate` needs).
#   static          build only kube-apiserver, kube-controller-manager, kube-scheduler (make image).
#   node            build only the real node's containerd, CNI plugins, kubelet, kube-proxy,
#                   local-path-provisioner and metrics-server, fetch busybox-static (and
#                   install runc, iptables).
#   release         the static control plane and busybox-static for amd64 and arm64: the
#                   control planes of a release's clustersync image and its busybox image
#                   (make release; the arm64 compile usually takes 15-25 minutes on 2 cores).
#   conformance     everything, then the end-to-end suite and the conformance images' programs
#                   and userlands (make conformance).
#
# Every Kubernetes binary is built with CGO_ENABLED=0 (as Kubernetes releases
# the control plane), so kubelet, kube-proxy and the +k3s1 kube-apiserver reuse
# the compiled packages of the static control plane from Go's build cache: the
# +k3s1 build is a relink of seconds, and the node's Kubernetes binaries add
# minutes, not the quarter of an hour a second (cgo) compile of Kubernetes took.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${CLUSTERSYNC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clustersync}

ETCD_VERSION=v3.7.0
KUBE_VERSION=v1.37.0
KWOK_VERSION=v0.8.0 # keep in step with hack/tools/kube/go.mod (kwok builds in the Kubernetes tools module)
CONTROLLER_GEN_VERSION=v0.23.0 # keep in step with hack/tools/controller-gen/go.mod
CONTAINERD_VERSION=v2.4.2 # keep in step with hack/tools/node/go.mod
CNI_PLUGINS_VERSION=v1.9.1 # keep in step with hack/tools/node/go.mod
LOCAL_PATH_VERSION=v0.0.30 # keep in step with hack/tools/localpath/go.mod and internal/binaries
METRICS_SERVER_VERSION=v0.9.0 # keep in step with hack/tools/metricsserver/go.mod and internal/binaries
BUSYBOX_VERSION=1.35.0 # Debian bookworm's busybox-static; keep in step with internal/binaries and internal/images.BusyboxTag

etcd_dir=$cache/etcd-$ETCD_VERSION
kube_dir=$cache/kubernetes-$KUBE_VERSION-static
kwok_dir=$cache/kwok-$KWOK_VERSION
controller_gen_dir=$cache/controller-gen-$CONTROLLER_GEN_VERSION
node_dir=$cache/node-containerd-$CONTAINERD_VERSION-cni-$CNI_PLUGINS_VERSION
kube_node_dir=$cache/kubernetes-$KUBE_VERSION-node
local_path_dir=$cache/local-path-provisioner-$LOCAL_PATH_VERSION
metrics_server_dir=$cache/metrics-server-$METRICS_SERVER_VERSION
busybox_dir=$cache/busybox-static-$BUSYBOX_VERSION
kube_dir_arm64=$cache/kubernetes-$KUBE_VERSION-static-arm64
busybox_dir_arm64=$cache/busybox-static-$BUSYBOX_VERSION-arm64
qemu_dir=$cache/qemu-user-static-debian12
e2e_dir=$cache/kubernetes-$KUBE_VERSION-e2e
USERLAND_VERSION=debian12-v4 # bump when hack/conformance-rootfs.sh changes what it builds; keep in step with internal/binaries
userland_dir=$cache/conformance-userland-$USERLAND_VERSION

print_env() {
	cat <<ENV
export CLUSTERSYNC_ETCD_BIN=$etcd_dir/etcd
export CLUSTERSYNC_KUBE_APISERVER_BIN=$kube_dir/kube-apiserver
export CLUSTERSYNC_KUBE_CONTROLLER_MANAGER_BIN=$kube_dir/kube-controller-manager
export CLUSTERSYNC_KUBE_SCHEDULER_BIN=$kube_dir/kube-scheduler
export CLUSTERSYNC_KWOK_BIN=$kwok_dir/kwok
export CLUSTERSYNC_KWOKCTL_BIN=$kwok_dir/kwokctl
export CLUSTERSYNC_CONTROLLER_GEN_BIN=$controller_gen_dir/controller-gen
export CLUSTERSYNC_KUBE_APISERVER_K3S_BIN=$cache/kubernetes-$KUBE_VERSION-k3s1/kube-apiserver
export CLUSTERSYNC_STATIC_KUBE_DIR=$kube_dir
export CLUSTERSYNC_STATIC_KUBE_DIR_ARM64=$kube_dir_arm64
export CLUSTERSYNC_BUSYBOX_ARM64_BIN=$busybox_dir_arm64/busybox
export CLUSTERSYNC_QEMU_AARCH64_BIN=$qemu_dir/qemu-aarch64-static
export CLUSTERSYNC_NODE_DIR=$node_dir
export CLUSTERSYNC_KUBE_NODE_DIR=$kube_node_dir
ENV
}

log() { echo "build-binaries: $*" >&2; }

# step NAME USUAL FUNC... runs FUNC when it has work to do, saying first how
# long it usually takes (USUAL, on 2 cores with a cold Go build cache) and
# then how long it took.
step() {
	local name=$1 usual=$2; shift 2
	local t0=$SECONDS
	log "$name: building (usually $usual on 2 cores, once per machine)"
	"$@"
	log "$name: done in $((SECONDS - t0)) s"
}

# complete DIR FILE... succeeds when every FILE is an executable in DIR.
complete() {
	local dir=$1; shift
	for f in "$@"; do [ -x "$dir/$f" ] || return 1; done
}

# build_into DIR MODULE_DIR LDFLAGS PKG:NAME... builds each package to DIR/NAME
# through a temporary folder, so an interrupted build leaves no partial cache.
build_into() {
	local dir=$1 moddir=$2 ldflags=$3; shift 3
	local tmp; tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
	for spec in "$@"; do
		local pkg=${spec%%:*} name=${spec##*:}
		log "  go build $pkg -> $dir/$name"
		(cd "$moddir" && go build -trimpath -ldflags "$ldflags" -o "$tmp/$name" "$pkg")
	done
	mkdir -p "$dir"
	mv "$tmp"/* "$dir"/
	rmdir "$tmp"
}

# controller_gen builds controller-gen, which writes api/'s deepcopy functions
# and config/crd/'s CRDs (make generate), unless it is cached.
controller_gen() {
	if complete "$controller_gen_dir" controller-gen; then
		log "controller-gen $CONTROLLER_GEN_VERSION: cached in $controller_gen_dir"
	else
		step "controller-gen $CONTROLLER_GEN_VERSION" "30 seconds" \
			build_into "$controller_gen_dir" "$here/tools/controller-gen" "-s -w" \
			"sigs.k8s.io/controller-tools/cmd/controller-gen:controller-gen"
	fi
}

# kube_ldflags prints the ldflags of a Kubernetes binary with gitVersion $1.
kube_ldflags() {
	local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
	local v=k8s.io/component-base/version
	echo "-s -w -X $v.gitVersion=$1 -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
}

# kube_build DIR VERSION PKG:NAME... builds Kubernetes commands of the pinned
# tools module reporting gitVersion VERSION, without cgo (see the top).
kube_build() {
	local dir=$1 version=$2; shift 2
	CGO_ENABLED=0 build_into "$dir" "$here/tools/kube" "$(kube_ldflags "$version")" "$@"
}

# etcd builds the etcd server unless it is cached.
etcd() {
	if complete "$etcd_dir" etcd; then
		log "etcd $ETCD_VERSION: cached in $etcd_dir"
	else
		step "etcd $ETCD_VERSION" "1-2 minutes" \
			build_into "$etcd_dir" "$here/tools/etcd" "-s -w" "go.etcd.io/etcd/server/v3:etcd"
	fi
}

# static builds kube-apiserver, kube-controller-manager and kube-scheduler
# without cgo, as Kubernetes releases them, unless cached: the local clusters
# run them and the clustersync image holds them (it has no C library).
static() { static_for "$(go env GOARCH)" "$kube_dir" "12-20 minutes"; }

# static_arm64 cross-compiles the same three commands for linux/arm64,
# unless cached: the control plane of a release's arm64 clustersync image.
# Nothing of the amd64 build is reused (every package compiles again for
# arm64), so it takes as long as the first static build.
static_arm64() { static_for arm64 "$kube_dir_arm64" "15-25 minutes"; }

# static_for ARCH DIR USUAL builds the static control plane for linux/ARCH
# into DIR unless it is cached there (USUAL: how long it usually takes).
static_for() {
	local arch=$1 dir=$2 usual=$3
	if complete "$dir" kube-apiserver kube-controller-manager kube-scheduler; then
		log "kubernetes $KUBE_VERSION linux/$arch: cached in $dir"
	else
		(export GOARCH=$arch; step "kubernetes $KUBE_VERSION static kube-apiserver, kube-controller-manager, kube-scheduler for linux/$arch" "$usual" \
			kube_build "$dir" "$KUBE_VERSION" \
			"k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver" \
			"k8s.io/kubernetes/cmd/kube-controller-manager:kube-controller-manager" \
			"k8s.io/kubernetes/cmd/kube-scheduler:kube-scheduler")
	fi
}

# k3s builds the same kube-apiserver with a K3s version string ("+k3s1"),
# for the tests of K3s detection of registered clusters. Only the link
# differs from static's, so after static it takes seconds.
k3s() {
	local k3s_dir=$cache/kubernetes-$KUBE_VERSION-k3s1
	if complete "$k3s_dir" kube-apiserver; then
		log "kube-apiserver $KUBE_VERSION+k3s1: cached in $k3s_dir"
	else
		step "kube-apiserver $KUBE_VERSION+k3s1 (a relink, for the K3s tests)" "under a minute" \
			kube_build "$k3s_dir" "$KUBE_VERSION+k3s1" "k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver"
	fi
}

# kwok builds kwok and kwokctl (kwokctl runs the local host's control
# plane; kwok its fake nodes) unless they are cached. They build in the
# Kubernetes tools module, against the control plane's Kubernetes
# libraries, whose compiled packages they reuse.
kwok() {
	if complete "$kwok_dir" kwok kwokctl; then
		log "kwok $KWOK_VERSION: cached in $kwok_dir"
	else
		step "kwok $KWOK_VERSION kwok and kwokctl" "under a minute after the static control plane" kwok_build
	fi
}

kwok_build() {
	CGO_ENABLED=0 build_into "$kwok_dir" "$here/tools/kube" "-s -w" \
		"sigs.k8s.io/kwok/cmd/kwok:kwok" "sigs.k8s.io/kwok/cmd/kwokctl:kwokctl"
}

# node builds containerd, its runc shim, the CNI plugins, kubelet,
# kube-proxy, local-path-provisioner and metrics-server of the local real
# node, unless cached, fetches busybox-static, and installs Debian's runc and
# iptables when they are not on PATH.
node() {
	node_build
	metrics_server
	busybox
	node_tools
}

# node_build builds the real node's Go binaries that the demo needs (see
# node) unless cached.
node_build() {
	if complete "$node_dir" containerd containerd-shim-runc-v2 cni/bridge cni/host-local cni/loopback cni/portmap; then
		log "containerd $CONTAINERD_VERSION, CNI plugins $CNI_PLUGINS_VERSION: cached in $node_dir"
	else
		step "containerd $CONTAINERD_VERSION, CNI plugins $CNI_PLUGINS_VERSION" "2-3 minutes" containerd_build
	fi
	if complete "$kube_node_dir" kubelet kube-proxy; then
		log "kubelet, kube-proxy $KUBE_VERSION: cached in $kube_node_dir"
	else
		step "kubelet, kube-proxy $KUBE_VERSION" "3-5 minutes after the static control plane" \
			kube_build "$kube_node_dir" "$KUBE_VERSION" \
			"k8s.io/kubernetes/cmd/kubelet:kubelet" \
			"k8s.io/kubernetes/cmd/kube-proxy:kube-proxy"
	fi
	if complete "$local_path_dir" local-path-provisioner; then
		log "local-path-provisioner $LOCAL_PATH_VERSION: cached in $local_path_dir"
	else
		step "local-path-provisioner $LOCAL_PATH_VERSION" "1-2 minutes" \
			build_into "$local_path_dir" "$here/tools/localpath" "-s -w" \
			"github.com/rancher/local-path-provisioner:local-path-provisioner"
	fi
}

# metrics_server builds metrics-server, the local host's resource metrics
# API (kubectl top), unless it is cached. The node runs without it, so the
# demo's build (run) leaves it out.
metrics_server() {
	if complete "$metrics_server_dir" metrics-server; then
		log "metrics-server $METRICS_SERVER_VERSION: cached in $metrics_server_dir"
	else
		step "metrics-server $METRICS_SERVER_VERSION" "2-3 minutes" \
			build_into "$metrics_server_dir" "$here/tools/metricsserver" "-s -w" \
			"sigs.k8s.io/metrics-server/cmd/metrics-server:metrics-server"
	fi
}

containerd_build() {
	build_into "$node_dir" "$here/tools/node" "-s -w" \
		"github.com/containerd/containerd/v2/cmd/containerd:containerd" \
		"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2:containerd-shim-runc-v2"
	build_into "$node_dir/cni" "$here/tools/node" "-s -w" \
		"github.com/containernetworking/plugins/plugins/main/bridge:bridge" \
		"github.com/containernetworking/plugins/plugins/ipam/host-local:host-local" \
		"github.com/containernetworking/plugins/plugins/main/loopback:loopback" \
		"github.com/containernetworking/plugins/plugins/meta/portmap:portmap"
}

# busybox puts Debian's statically linked busybox (package busybox-static,
# downloaded with apt-get download and unpacked, not installed) into the
# cache, unless it is there: dev up builds the rewrite-hosts image of
# virtual clusters' StatefulSet pods from it (internal/images.Busybox).
busybox() {
	if complete "$busybox_dir" busybox; then
		log "busybox-static $BUSYBOX_VERSION: cached in $busybox_dir"
		return
	fi
	if ! have_apt; then
		log "busybox-static: cannot be fetched here (no apt-get/dpkg-deb); StatefulSet pods of virtual clusters on the local host need sync.toHost.pods.rewriteHosts.initContainer.image set to an image with sh and sed"
		return 0
	fi
	log "busybox-static $BUSYBOX_VERSION: downloading Debian's package (apt-get download busybox-static; a few seconds)"
	debian_file busybox-static "" bin/busybox "$busybox_dir"
	case $fetched_version in
	*:$BUSYBOX_VERSION-*) ;;
	*) log "busybox-static: Debian offers $fetched_version, not $BUSYBOX_VERSION; using it anyway (update BUSYBOX_VERSION)" ;;
	esac
	log "busybox-static $fetched_version: in $busybox_dir"
}

# busybox_arm64 puts Debian's arm64 busybox-static into the cache, unless it
# is there: the arm64 half of a release's busybox image. apt reads arm64
# package lists into a state folder of its own (Dir::State::Lists), so the
# machine's dpkg architectures and lists stay as they are.
busybox_arm64() {
	if complete "$busybox_dir_arm64" busybox; then
		log "busybox-static $BUSYBOX_VERSION linux/arm64: cached in $busybox_dir_arm64"
		return
	fi
	log "busybox-static $BUSYBOX_VERSION linux/arm64: downloading Debian's arm64 package (its own apt lists; about 10 seconds)"
	debian_file busybox-static arm64 bin/busybox "$busybox_dir_arm64"
	log "busybox-static $fetched_version linux/arm64: in $busybox_dir_arm64"
}

# qemu puts Debian's qemu-aarch64-static (package qemu-user-static,
# downloaded and unpacked, not installed) into the cache, unless it is
# there: make release starts the arm64 images' programs under it
# (internal/release.CheckArm64).
qemu() {
	if complete "$qemu_dir" qemu-aarch64-static; then
		log "qemu-aarch64-static: cached in $qemu_dir"
		return
	fi
	if ! have_apt; then
		log "qemu-aarch64-static: cannot be fetched here (no apt-get/dpkg-deb); make release will not start the arm64 programs"
		return 0
	fi
	log "qemu-aarch64-static: downloading Debian's qemu-user-static (apt-get download; a few seconds)"
	debian_file qemu-user-static "" usr/bin/qemu-aarch64-static "$qemu_dir"
	log "qemu-aarch64-static $fetched_version: in $qemu_dir"
}

# foreign_download DIR ARCH PKG... downloads Debian packages of another
# architecture into DIR with apt lists of their own in DIR (not installed;
# the machine's dpkg is not told of ARCH).
foreign_download() {
	local dir=$1 arch=$2; shift 2
	mkdir -p "$dir/lists/partial" "$dir/apt-cache/archives/partial"
	local o=(-q -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/apt-cache" -o "Dir::State::status=/dev/null"
		-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch")
	o+=(-o "APT::Sandbox::User=root") # the folder is root's; apt's _apt user cannot write it
	apt-get "${o[@]}" update >&2
	(cd "$dir" && apt-get "${o[@]}" download "$@" >&2 2>/dev/null)
}

# have_apt succeeds when Debian's packages can be downloaded and unpacked
# here (apt-get, dpkg-deb).
have_apt() { command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; }

# debian_file PKG ARCH FILE DIR downloads Debian package PKG (of
# architecture ARCH, "" for the machine's; not installed) and moves FILE, a
# path in it, into DIR; fetched_version is then the package's version.
debian_file() {
	local pkg=$1 arch=$2 file=$3 dir=$4
	local tmp; tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
	if [ -n "$arch" ]; then
		foreign_download "$tmp" "$arch" "$pkg:$arch"
	else
		(cd "$tmp" && { apt-get download -q "$pkg" >&2 2>/dev/null || { apt-get update -q >&2 && apt-get download -q "$pkg" >&2; }; })
	fi
	local deb; deb=$(ls "$tmp/${pkg}_"*.deb)
	fetched_version=$(dpkg-deb -f "$deb" Version)
	dpkg-deb -x "$deb" "$tmp/pkg"
	mkdir -p "$dir"
	mv "$tmp/pkg/$file" "$dir/"
	rm -rf "$tmp"
}

# node_tools installs the real node's Debian tools when missing (see node).
node_tools() {
	debian_tool runc runc "the OCI runtime containerd starts containers with"
	debian_tool iptables iptables "the CNI bridge plugin and kube-proxy program the pods' NAT and Service rules with it"
}

# debian_tool CMD PACKAGE WHY installs Debian's PACKAGE when CMD is not on PATH
# (runc: one built from the module proxy lacks seccomp without libseccomp-dev;
# iptables: a C program), saying so; it fails when it cannot (not root, no apt-get).
debian_tool() {
	local cmd=$1 pkg=$2 why=$3
	if command -v "$cmd" >/dev/null; then
		log "$cmd: $(command -v "$cmd")"
	elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		log "$cmd: not found ($why); installing Debian's package (apt-get install $pkg)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >&2 ||
			{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >&2; }
	else
		log "$cmd: not found, and it cannot be installed here (needs root and apt-get); the real node cannot run"
		return 1
	fi
}

# e2e builds the Kubernetes end-to-end test binary (go test -c
# k8s.io/kubernetes/test/e2e, reporting v1.37.0 like the control plane),
# the ginkgo command (it runs the binary in parallel processes), kubectl,
# and the programs of the conformance images from Go source: agnhost,
# nonewprivs, sample-apiserver and a static etcd (the cache's etcd, which
# the local clusters run, may be linked against the C library; the image
# has none); and copies the files those images carry
# (agnhost's porter certificate, the nautilus and kitten pages) from the
# Kubernetes module into files/, and the suite's list of conformance specs
# (test/conformance/testdata/conformance.yaml, which make conformance
# counts the run against) into files/. Skipped when cached.
e2e() {
	if complete "$e2e_dir" e2e.test ginkgo kubectl agnhost nonewprivs sample-apiserver etcd; then
		log "kubernetes $KUBE_VERSION end-to-end suite: cached in $e2e_dir"
		if [ ! -f "$e2e_dir/files/conformance.yaml" ]; then
			log "  copying the suite's conformance.yaml into $e2e_dir/files (a cache made before it was kept)"
			e2e_conformance_yaml "$e2e_dir/files"
		fi
	else
		step "kubernetes $KUBE_VERSION end-to-end suite (e2e.test, ginkgo, kubectl, agnhost, nonewprivs, sample-apiserver, etcd)" \
			"10-35 minutes; less after the static control plane, whose packages it reuses" e2e_build
	fi
}

# e2e_conformance_yaml DIR copies the Kubernetes module's list of
# conformance specs into DIR.
e2e_conformance_yaml() {
	local src; src=$(cd "$here/tools/kube" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)
	cp "$src/test/conformance/testdata/conformance.yaml" "$1/conformance.yaml"
	chmod u+w "$1/conformance.yaml"
}

e2e_build() {
	local tmp; tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
	log "  go test -c k8s.io/kubernetes/test/e2e -> $e2e_dir/e2e.test"
	(cd "$here/tools/kube" && CGO_ENABLED=0 go test -c -trimpath -ldflags "$(kube_ldflags "$KUBE_VERSION")" \
		-o "$tmp/e2e.test" k8s.io/kubernetes/test/e2e)
	CGO_ENABLED=0 build_into "$tmp" "$here/tools/kube" "$(kube_ldflags "$KUBE_VERSION")" \
		"k8s.io/kubernetes/cmd/kubectl:kubectl" \
		"k8s.io/kubernetes/test/images/agnhost:agnhost" \
		"k8s.io/kubernetes/test/images/nonewprivs:nonewprivs" \
		"k8s.io/sample-apiserver:sample-apiserver" \
		"github.com/onsi/ginkgo/v2/ginkgo:ginkgo"
	CGO_ENABLED=0 build_into "$tmp" "$here/tools/etcd" "-s -w" "go.etcd.io/etcd/server/v3:etcd"
	local src; src=$(cd "$here/tools/kube" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)
	mkdir -p "$tmp/files/porter" "$tmp/files/nautilus" "$tmp/files/kitten"
	cp "$src/test/images/agnhost/porter/localhost.crt" "$src/test/images/agnhost/porter/localhost.key" "$tmp/files/porter/"
	cp "$src/test/images/nautilus/html/"* "$tmp/files/nautilus/"
	cp "$src/test/images/kitten/html/"* "$tmp/files/kitten/"
	e2e_conformance_yaml "$tmp/files"
	chmod -R u+w "$tmp/files"
	chmod 755 "$tmp"
	rm -rf "$e2e_dir"
	mv "$tmp" "$e2e_dir"
}

# userland builds the Debian userlands of the conformance images that are
# not Go programs alone (busybox, agnhost's tools, nginx, the glibc DNS
# test image) with hack/conformance-rootfs.sh, unless cached.
userland() {
	if [ ! -f "$userland_dir/.complete" ]; then
		# BusyBox is compiled from source for the busybox image.
		debian_tool gcc gcc "the busybox image's BusyBox is compiled from source" || return 1
		debian_tool make make "the busybox image's BusyBox is compiled from source" || return 1
		debian_tool bzip2 bzip2 "BusyBox's source tarball is .tar.bz2" || return 1
	fi
	"$here/conformance-rootfs.sh" "$userland_dir"
}

# for_run builds what the demo (make run) needs: the local host's control
# plane (etcd, static Kubernetes, kwokctl) and its real node.
for_run() {
	etcd
	static
	kwok
	node_build
	busybox
	node_tools || log "the real node cannot run here; dev up uses kwok fake nodes only"
}

main() {
	mkdir -p "$cache"
	local start=$SECONDS mode=${1:-all}
	for_run
	if [ "$mode" != run ]; then
		metrics_server
		k3s
		controller_gen
		# internal/release's tests start arm64 programs under it.
		qemu
		# The dashboard's browser tests drive Debian's chromium (chromedp).
		debian_tool chromium chromium "the dashboard's browser tests drive it headless"
	fi
	if [ "$mode" = conformance ]; then
		e2e
		userland
	fi
	log "the binaries of make $(case $mode in all) echo test ;; *) echo "$mode" ;; esac) are ready in $cache ($((SECONDS - start)) s)"
}

case "${1:-}" in
--print-env) print_env ;;
controller-gen) mkdir -p "$cache"; controller_gen ;;
static) mkdir -p "$cache"; static ;;
release) mkdir -p "$cache"; static; busybox; busybox_arm64; qemu; static_arm64 ;;
node) mkdir -p "$cache"; node ;;
run) main run ;;
conformance) main conformance ;;
"") main all ;;
*) echo "usage: $0 [--print-env|run|controller-gen|static|node|conformance]" >&2; exit 2 ;;
esac
