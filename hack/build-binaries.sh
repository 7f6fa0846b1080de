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
#       the local real node's runtime, CNI plugins, kubelet, kube-proxy, storage provisioner
#       and resource metrics API (kubectl top);
#       the default and `node` build them and install Debian's runc and iptables when missing.
#
# CLUSTERSYNC_CACHE defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/clustersync.
# A folder that is already complete is skipped, so a warm machine builds
# nothing. Usage: hack/build-binaries.sh [--print-env|controller-gen|static|node]
#   --print-env     print only the CLUSTERSYNC_*_BIN variables, as shell exports.
#   controller-gen  build only controller-gen (what `make generate` needs).
#   static          build only kube-apiserver, kube-controller-manager, kube-scheduler (make image).
#   node            build only the real node's containerd, CNI plugins, kubelet, kube-proxy,
#                   local-path-provisioner and metrics-server (and install runc, iptables).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${CLUSTERSYNC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clustersync}

ETCD_VERSION=v3.7.0
KUBE_VERSION=v1.37.0
KWOK_VERSION=v0.8.0
CONTROLLER_GEN_VERSION=v0.23.0 # keep in step with hack/tools/controller-gen/go.mod
CONTAINERD_VERSION=v2.4.2 # keep in step with hack/tools/node/go.mod
CNI_PLUGINS_VERSION=v1.9.1 # keep in step with hack/tools/node/go.mod
LOCAL_PATH_VERSION=v0.0.30 # keep in step with hack/tools/localpath/go.mod and internal/binaries
METRICS_SERVER_VERSION=v0.9.0 # keep in step with hack/tools/metricsserver/go.mod and internal/binaries

etcd_dir=$cache/etcd-$ETCD_VERSION
kube_dir=$cache/kubernetes-$KUBE_VERSION-static
kwok_dir=$cache/kwok-$KWOK_VERSION
controller_gen_dir=$cache/controller-gen-$CONTROLLER_GEN_VERSION
node_dir=$cache/node-containerd-$CONTAINERD_VERSION-cni-$CNI_PLUGINS_VERSION
kube_node_dir=$cache/kubernetes-$KUBE_VERSION-node
local_path_dir=$cache/local-path-provisioner-$LOCAL_PATH_VERSION
metrics_server_dir=$cache/metrics-server-$METRICS_SERVER_VERSION

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
export CLUSTERSYNC_NODE_DIR=$node_dir
export CLUSTERSYNC_KUBE_NODE_DIR=$kube_node_dir
ENV
}

log() { echo "build-binaries: $*" >&2; }

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
		log "controller-gen $CONTROLLER_GEN_VERSION: building (about 30 seconds, once per machine)"
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

# static builds kube-apiserver, kube-controller-manager and kube-scheduler
# without cgo, as Kubernetes releases them, unless cached: the local clusters
# run them and the clustersync image holds them (it has no C library).
static() {
	if complete "$kube_dir" kube-apiserver kube-controller-manager kube-scheduler; then
		log "kubernetes $KUBE_VERSION: cached in $kube_dir"
	else
		log "kubernetes $KUBE_VERSION: building static kube-apiserver, kube-controller-manager, kube-scheduler (10-20 minutes on 2 cores, once per machine)"
		CGO_ENABLED=0 build_into "$kube_dir" "$here/tools/kube" "$(kube_ldflags "$KUBE_VERSION")" \
			"k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver" \
			"k8s.io/kubernetes/cmd/kube-controller-manager:kube-controller-manager" \
			"k8s.io/kubernetes/cmd/kube-scheduler:kube-scheduler"
	fi
}

# node builds containerd, its runc shim, the CNI plugins, kubelet and
# kube-proxy of the local real node, unless cached, and installs Debian's runc
# and iptables when they are not on PATH.
node() {
	node_build
	node_tools
}

# node_build builds the real node's Go binaries (see node) unless cached.
node_build() {
	if complete "$node_dir" containerd containerd-shim-runc-v2 cni/bridge cni/host-local cni/loopback cni/portmap; then
		log "containerd $CONTAINERD_VERSION, CNI plugins $CNI_PLUGINS_VERSION: cached in $node_dir"
	else
		log "containerd $CONTAINERD_VERSION, CNI plugins $CNI_PLUGINS_VERSION: building (about 2 minutes, once per machine)"
		build_into "$node_dir" "$here/tools/node" "-s -w" \
			"github.com/containerd/containerd/v2/cmd/containerd:containerd" \
			"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2:containerd-shim-runc-v2"
		build_into "$node_dir/cni" "$here/tools/node" "-s -w" \
			"github.com/containernetworking/plugins/plugins/main/bridge:bridge" \
			"github.com/containernetworking/plugins/plugins/ipam/host-local:host-local" \
			"github.com/containernetworking/plugins/plugins/main/loopback:loopback" \
			"github.com/containernetworking/plugins/plugins/meta/portmap:portmap"
	fi
	if complete "$kube_node_dir" kubelet kube-proxy; then
		log "kubelet, kube-proxy $KUBE_VERSION: cached in $kube_node_dir"
	else
		log "kubelet, kube-proxy $KUBE_VERSION: building (a few minutes, once per machine)"
		build_into "$kube_node_dir" "$here/tools/kube" "$(kube_ldflags "$KUBE_VERSION")" \
			"k8s.io/kubernetes/cmd/kubelet:kubelet" \
			"k8s.io/kubernetes/cmd/kube-proxy:kube-proxy"
	fi
	if complete "$local_path_dir" local-path-provisioner; then
		log "local-path-provisioner $LOCAL_PATH_VERSION: cached in $local_path_dir"
	else
		log "local-path-provisioner $LOCAL_PATH_VERSION: building (about a minute, once per machine)"
		build_into "$local_path_dir" "$here/tools/localpath" "-s -w" \
			"github.com/rancher/local-path-provisioner:local-path-provisioner"
	fi
	if complete "$metrics_server_dir" metrics-server; then
		log "metrics-server $METRICS_SERVER_VERSION: cached in $metrics_server_dir"
	else
		log "metrics-server $METRICS_SERVER_VERSION: building (a few minutes, once per machine)"
		build_into "$metrics_server_dir" "$here/tools/metricsserver" "-s -w" \
			"sigs.k8s.io/metrics-server/cmd/metrics-server:metrics-server"
	fi
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

main() {
	mkdir -p "$cache"
	local start=$SECONDS

	if complete "$etcd_dir" etcd; then
		log "etcd $ETCD_VERSION: cached in $etcd_dir"
	else
		log "etcd $ETCD_VERSION: building (about 1 minute, once per machine)"
		build_into "$etcd_dir" "$here/tools/etcd" "-s -w" "go.etcd.io/etcd/server/v3:etcd"
	fi

	static

	# The same kube-apiserver with a K3s version string ("+k3s1"), for the
	# tests of K3s detection of registered clusters. Only the link differs,
	# so with a warm Go build cache this takes seconds.
	local k3s_dir=$cache/kubernetes-$KUBE_VERSION-k3s1
	if complete "$k3s_dir" kube-apiserver; then
		log "kube-apiserver $KUBE_VERSION+k3s1: cached in $k3s_dir"
	else
		log "kube-apiserver $KUBE_VERSION+k3s1: building (relink of kube-apiserver)"
		local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
		local v=k8s.io/component-base/version
		build_into "$k3s_dir" "$here/tools/kube" "-s -w -X $v.gitVersion=$KUBE_VERSION+k3s1 -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z" \
			"k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver"
	fi

	if complete "$kwok_dir" kwok kwokctl; then
		log "kwok $KWOK_VERSION: cached in $kwok_dir"
	else
		log "kwok $KWOK_VERSION: installing kwok and kwokctl"
		local tmp; tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
		GOBIN=$tmp GOFLAGS=-buildvcs=false go install -trimpath -ldflags "-s -w" \
			"sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION"
		mkdir -p "$kwok_dir"; mv "$tmp"/* "$kwok_dir"/; rmdir "$tmp"
	fi

	controller_gen
	node_build
	node_tools || log "the real node cannot run here; dev up and the tests use kwok fake nodes only"
	log "all binaries ready in $cache ($((SECONDS - start)) s)"
}

case "${1:-}" in
--print-env) print_env ;;
controller-gen) mkdir -p "$cache"; controller_gen ;;
static) mkdir -p "$cache"; static ;;
node) mkdir -p "$cache"; node ;;
"") main ;;
*) echo "usage: $0 [--print-env|controller-gen|static|node]" >&2; exit 2 ;;
esac
