// Package runner wires and runs the syncer of one virtual cluster: a
// controller-runtime manager on the virtual API server, a cluster.Cluster
// whose cache covers the host namespace, the mapping store, the objects every
// virtual cluster needs (bootstrap.go), and one controller per enabled
// resource kind.
package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/apps"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/kubeletproxy"
	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/metricsapi"
	"github.com/clustersync/clustersync/internal/virtual/mtls"
	"github.com/clustersync/clustersync/internal/virtual/patches"
	"github.com/clustersync/clustersync/internal/virtual/resources"
	"github.com/clustersync/clustersync/internal/virtual/resources/services"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Options configure a syncer.
type Options struct {
	// Name is the virtual cluster's name.
	Name string
	// HostNamespace is the host namespace every synced object goes to.
	HostNamespace string
	// Virtual and Host are REST configs for the two API servers; the
	// syncer's QPS and burst come from Config.Syncer.
	Virtual, Host *rest.Config
	// Config is the virtual cluster's configuration.
	Config *config.Config
	// StateDir holds the mapping store (mappings.db), created (mode 0700) when
	// missing; "" keeps it in memory.
	StateDir string
	// HealthAddr serves /healthz and /readyz (e.g. "127.0.0.1:0"); "" serves none.
	HealthAddr string
	// MetricsAddr serves Prometheus metrics on /metrics (controller-runtime's:
	// reconciles, work queues, REST client requests) and Go profiles on
	// /debug/pprof/; "" serves none.
	MetricsAddr string
	// HostNamespaceExists tells that the syncer runs inside HostNamespace
	// (the chart's control plane pod): bootstrap does not create it, and
	// the syncer needs no rights on namespaces.
	HostNamespaceExists bool
	// DNS, when set, is the pod that serves the virtual cluster's DNS; the
	// host copy of the virtual kube-system/kube-dns Service leads to it.
	// Unset, that Service selects pods of the virtual cluster like any
	// other (a DNS server the tenant runs itself).
	DNS *services.DNSBackend
	// Kubelet, when set, serves the fake nodes' kubelet API (logs, exec,
	// attach, port-forward of the tenant's pods through the host API), and
	// fake nodes name it. Unset, fake nodes name no kubelet.
	Kubelet *KubeletOptions
	// MetricsAPI, when set, serves the virtual cluster's metrics.k8s.io
	// API (kubectl top) from the host's, and registers it with the
	// virtual API server's aggregation layer. Unset, the virtual cluster
	// has no metrics API.
	MetricsAPI *MetricsAPIOptions
	// Pod, when set, is the pod control plane the syncer runs in: the
	// syncer keeps its API server's certificate covering the addresses its
	// host Service gets (controlplane.KeepServingCert) and writes the
	// Secrets of Config.ExportKubeConfig (controlplane.Exporter). Unset,
	// it does neither.
	Pod *controlplane.PodOptions
	// Ready, when set, is called once every cache has synced and the
	// controllers are running.
	Ready func()
	Log   logr.Logger
}

// KubeletOptions place the syncer's kubelet proxy
// (internal/virtual/kubeletproxy).
type KubeletOptions struct {
	// Addr is where it listens, e.g. "127.0.0.1:10250"; the fake nodes name
	// that IP (127.0.0.1 when Addr has none) and port, so the virtual API
	// server must reach it there.
	Addr string
	// TLS are its serving certificate and the CA of the API server's
	// kubelet client certificate.
	TLS mtls.Files
}

// MetricsAPIOptions place the syncer's metrics API
// (internal/virtual/metricsapi).
type MetricsAPIOptions struct {
	// Addr is where it listens, e.g. ":9444".
	Addr string
	// IP is the address the virtual API server reaches it at (the
	// control plane pod's IP; the Endpoints of a Service cannot name
	// loopback).
	IP string
	// TLS are its serving certificate (for
	// controlplane.MetricsAPIServerName) and the CA of the API server's
	// front-proxy client certificate, which also signs the serving one.
	TLS mtls.Files
}

// endpoint is where the fake nodes say the kubelet is.
// tenantAddr is where the proxy listens with
// networking.advanced.proxyKubelets: every address, on k.Addr's port.
func (k KubeletOptions) tenantAddr() string {
	_, port, err := net.SplitHostPort(k.Addr)
	if err != nil {
		return k.Addr
	}
	return net.JoinHostPort("", port)
}

func (k KubeletOptions) endpoint() (syncer.KubeletEndpoint, error) {
	host, port, err := net.SplitHostPort(k.Addr)
	if err != nil {
		return syncer.KubeletEndpoint{}, fmt.Errorf("kubelet address %q: %w", k.Addr, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return syncer.KubeletEndpoint{}, fmt.Errorf("kubelet address %q: port must be 1 to 65535", k.Addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	} else if ip == nil {
		return syncer.KubeletEndpoint{}, fmt.Errorf("kubelet address %q: want an IP, not a host name", k.Addr)
	}
	return syncer.KubeletEndpoint{IP: host, Port: int32(p)}, nil
}

// Run runs the syncer until ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Config == nil {
		o.Config = config.Default()
	}
	if o.Name == "" || o.HostNamespace == "" {
		return errors.New("runner: Name and HostNamespace are required")
	}
	if err := CheckConfig(o.Config); err != nil {
		return err
	}
	tr := translate.Translator{VCluster: o.Name, HostNamespace: o.HostNamespace}
	sc := o.Config.Syncer
	vcfg, hcfg := rest.CopyConfig(o.Virtual), rest.CopyConfig(o.Host)
	vcfg.QPS, vcfg.Burst = sc.VirtualQPS, sc.VirtualBurst
	hcfg.QPS, hcfg.Burst = sc.HostQPS, sc.HostBurst
	// v1 Endpoints are deprecated but are what vCluster syncs; keep the log clean.
	vcfg.WarningHandlerWithContext, hcfg.WarningHandlerWithContext = rest.NoWarnings{}, rest.NoWarnings{}
	// Protobuf, as kube-controller-manager uses: less encoding work for both
	// API servers and for the syncer than JSON. ContentType stays unset:
	// controller-runtime then sends protobuf for the built-in kinds and
	// JSON for the others (custom resources, volume snapshots), which have
	// no protobuf encoding.
	for _, c := range []*rest.Config{vcfg, hcfg} {
		c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil { // customResources copy CRDs
		return err
	}
	if err := snapshotv1.AddToScheme(scheme); err != nil { // sync.toHost.volumeSnapshots
		return err
	}
	if err := gatewayv1.Install(scheme); err != nil { // sync.toHost.gatewayApi, sync.fromHost.gateways
		return err
	}
	strip := cache.TransformStripManagedFields()
	mgr, err := ctrl.NewManager(vcfg, manager.Options{
		Scheme:                  scheme,
		Logger:                  o.Log,
		Metrics:                 metricsserver.Options{BindAddress: healthAddr(o.MetricsAddr), ExtraHandlers: pprofHandlers()},
		HealthProbeBindAddress:  healthAddr(o.HealthAddr),
		Cache:                   cache.Options{DefaultTransform: strip},
		Controller:              ctrlconfig.Controller{SkipNameValidation: ptrTrue(), MaxConcurrentReconciles: sc.Workers},
		GracefulShutdownTimeout: ptrDuration(10 * time.Second),
	})
	if err != nil {
		return fmt.Errorf("virtual manager: %w", err)
	}
	host, err := cluster.New(hcfg, func(co *cluster.Options) {
		co.Scheme = scheme
		co.Logger = o.Log
		co.Cache.DefaultNamespaces = map[string]cache.Config{o.HostNamespace: {}}
		co.Cache.DefaultTransform = strip
	})
	if err != nil {
		return fmt.Errorf("host cluster: %w", err)
	}
	if err := mgr.Add(host); err != nil {
		return err
	}

	store := mapping.NewMemory()
	if o.StateDir != "" {
		if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
		if store, err = mapping.Open(filepath.Join(o.StateDir, "mappings.db"), 200*time.Millisecond); err != nil {
			return err
		}
	}
	defer store.Close()

	// Bootstrap with live clients, before any controller runs, once the
	// virtual API server is ready (in the chart's pod the syncer starts
	// beside kube-apiserver, not after it).
	if err := controlplane.WaitForAPIServer(ctx, vcfg, func(msg string) { o.Log.Info(msg) }); err != nil {
		return err
	}
	vc, err := client.New(vcfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	hc, err := client.New(hcfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := bootstrap(ctx, tr, o.Config, vc, hc, !o.HostNamespaceExists); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	sets, err := compilePatches(o.Config)
	if err != nil {
		return err
	}
	if err := rebuildReferences(ctx, vc, store, o.Config, sets); err != nil {
		return fmt.Errorf("rebuild mapping store: %w", err)
	}

	s := syncer.NewContext(tr, o.Config, mgr.GetClient(), host.GetClient(), mgr.GetAPIReader(), host.GetAPIReader(),
		mgr.GetEventRecorder("clustersync-syncer"), store, o.Log)
	if o.Kubelet != nil {
		if s.Kubelet, err = o.Kubelet.endpoint(); err != nil {
			return err
		}
		kp, err := kubeletproxy.New(tr, hcfg, o.Log.WithName("kubelet-proxy"))
		if err != nil {
			return err
		}
		files, addr := o.Kubelet.TLS, o.Kubelet.Addr
		if pk := o.Config.Networking.Advanced.ProxyKubelets; pk.ByHostname || pk.ByIP {
			vcs, err := kubernetes.NewForConfig(vcfg)
			if err != nil {
				return err
			}
			kp.SetTenant(&kubeletproxy.Tenant{Translator: tr, Reviews: vcs, Virtual: mgr.GetClient(), Host: host.GetClient(),
				Claims: o.Config.Sync.ToHost.PersistentVolumeClaims.Enabled, ByHostname: pk.ByHostname, ByIP: pk.ByIP})
			files.ClientCertOptional = true
			// The tenant's node exporters come through the pod's own
			// address (its Services); without proxyKubelets the proxy
			// listens where --kubelet-addr says (the chart: 127.0.0.1), so
			// no other pod can even connect.
			addr = o.Kubelet.tenantAddr()
		}
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			return mtls.Serve(ctx, "kubelet proxy", addr, files, kp)
		})); err != nil {
			return err
		}
	}
	if o.Pod != nil {
		if err := podTasks(ctx, mgr, vcfg, hcfg, *o.Pod, o.Config, o.Log); err != nil {
			return err
		}
	}
	if o.MetricsAPI != nil {
		if err := serveMetricsAPI(ctx, mgr, vc, tr, vcfg, hcfg, *o.MetricsAPI, o.Config.Integrations.MetricsServer, o.Log.WithName("metrics-api")); err != nil {
			return err
		}
	}
	if deleted, err := resources.Cleanup(ctx, hc, tr, o.Config); err != nil {
		return err
	} else if len(deleted) > 0 {
		o.Log.Info("deleted the host copies of kinds switched off", "deleted", deleted)
	}
	// Replicas of networking.replicateServices entries removed since the
	// last start (in the host namespaces the syncer may still write).
	ro := services.ReplicationOptionsOf(o.Config, tr.VCluster)
	if deleted, err := services.DeleteStaleReplicas(ctx, hc, vc, ro.WrittenNamespaces(tr.HostNamespace), ro); err != nil {
		return err
	} else if len(deleted) > 0 {
		o.Log.Info("deleted the replicas of networking.replicateServices entries removed", "deleted", deleted)
	}
	if err := registerAPIEndpoints(mgr, host, tr); err != nil {
		return err
	}
	if err := register(ctx, sets, resources.Env{Manager: mgr, Host: host, Syncer: s, Config: o.Config, DNS: o.DNS,
		HostServiceAccount: o.Config.WorkloadServiceAccountName(tr.VCluster), ClusterDomain: o.Config.Networking.Advanced.ClusterDomain}); err != nil {
		return err
	}

	if err := addDeployer(mgr, host, o, tr); err != nil {
		return err
	}

	var ready atomic.Bool
	if err := mgr.AddReadyzCheck("synced", func(*http.Request) error {
		if !ready.Load() {
			return errors.New("caches not synced")
		}
		return nil
	}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if !mgr.GetCache().WaitForCacheSync(ctx) || !host.GetCache().WaitForCacheSync(ctx) {
			return nil
		}
		ready.Store(true)
		if o.Ready != nil {
			o.Ready()
		}
		<-ctx.Done()
		return nil
	})); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// addDeployer adds the runnable that applies experimental.deploy.vcluster
// (internal/virtual/apps), reporting on the control plane's host pod when
// the syncer runs in one. Charts are fetched below StateDir (a temporary
// folder without one).
func addDeployer(mgr manager.Manager, host cluster.Cluster, o Options, tr translate.Translator) error {
	cacheDir := filepath.Join(os.TempDir(), "clustersync-deploy-"+tr.VCluster)
	if o.StateDir != "" {
		cacheDir = filepath.Join(o.StateDir, "deploy")
	}
	vcfg := rest.CopyConfig(o.Virtual)
	vcfg.QPS, vcfg.Burst = 50, 100
	d := &apps.Deployer{Name: tr.VCluster, HostNamespace: tr.HostNamespace, Config: o.Config, Virtual: vcfg,
		Mapper: mgr.GetRESTMapper(), CacheDir: cacheDir, Log: o.Log.WithName("deploy")}
	if o.Pod != nil {
		hk, err := kubernetes.NewForConfig(o.Host)
		if err != nil {
			return err
		}
		d.Pod = &apps.PodReport{Host: hk, Namespace: o.Pod.Namespace, Name: controlplane.PodName(o.Pod.Name),
			Recorder: host.GetEventRecorder("clustersync-deploy")}
	}
	return mgr.Add(d)
}

// podTasks adds what the syncer does for the pod control plane pod it runs
// in: KeepServingCert, and the exportKubeConfig Secrets, written once now
// (so that they exist when the syncer is ready; a failure is logged) and
// kept current after (controlplane.Exporter).
func podTasks(ctx context.Context, mgr manager.Manager, vcfg, hcfg *rest.Config, pod controlplane.PodOptions, cfg *config.Config, log logr.Logger) error {
	hk, err := kubernetes.NewForConfig(hcfg)
	if err != nil {
		return err
	}
	vk, err := kubernetes.NewForConfig(vcfg)
	if err != nil {
		return err
	}
	exporter := controlplane.Exporter{Pod: pod, Host: hk, Virtual: vk,
		Secrets: cfg.ExportKubeConfig.KubeconfigSecrets(pod.Name, pod.Namespace)}
	if err := exporter.Export(ctx); err != nil {
		log.Error(err, "exporting the kubeconfig Secrets (exportKubeConfig); trying again every 10 s")
	}
	for _, task := range []func(context.Context) error{
		func(ctx context.Context) error {
			return controlplane.KeepServingCert(ctx, hk, pod, log.WithName("serving-cert"))
		},
		func(ctx context.Context) error { return exporter.Run(ctx, log.WithName("export-kubeconfig")) },
	} {
		if err := mgr.Add(manager.RunnableFunc(task)); err != nil {
			return err
		}
	}
	return nil
}

// compilePatches compiles, once for the start, the patches of every kind
// the configuration switches on, keyed by the kind's name (kinds without
// patches have none).
func compilePatches(cfg *config.Config) (map[string]*patches.Set, error) {
	sets := map[string]*patches.Set{}
	var errs []error
	for _, k := range resources.Kinds() {
		if !k.Enabled(cfg) {
			continue
		}
		set, err := k.CompilePatches(cfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if set != nil {
			sets[k.Name] = set
		}
	}
	return sets, errors.Join(errs...)
}

// register adds the controllers of every kind the configuration switches
// on (resources.Kinds), each with its compiled patches from sets.
func register(ctx context.Context, sets map[string]*patches.Set, env resources.Env) error {
	var errs []error
	crds := map[string]bool{}
	for _, k := range resources.Kinds() {
		if !k.Enabled(env.Config) {
			continue
		}
		if set := sets[k.Name]; set != nil {
			env.Syncer.SetPatches(k.HostKinds[0], set)
		}
		if err := k.CopyCRDs(ctx, env, crds); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := k.Register(ctx, env); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.Name, err))
		}
	}
	return errors.Join(errs...)
}

// rebuildReferences recomputes from the virtual objects of every kind that
// is on which objects are referenced (resources.Kind.Referrers), so that no
// Secret or ConfigMap looks unused to its controller while the referring
// kind's controller has not caught up after a restart; referrers that are
// gone, or whose kind is off, are forgotten. What the reference patches of
// a kind name (sets, compiled by compilePatches) is recomputed the same way
// (syncer.PatchesRef).
func rebuildReferences(ctx context.Context, vc client.Client, store *mapping.Store, cfg *config.Config, sets map[string]*patches.Set) error {
	live := map[mapping.Ref]bool{}
	for _, k := range resources.Kinds() {
		if k.Referrers == nil || !k.Enabled(cfg) {
			continue
		}
		refs, err := k.Referrers(ctx, vc)
		if err != nil {
			return fmt.Errorf("%s: %w", k.Name, err)
		}
		for from, to := range refs {
			live[from] = true
			store.SetReferences(from, to)
		}
	}
	for _, k := range resources.Kinds() {
		set := sets[k.Name]
		if !k.Enabled(cfg) || !set.HasReferences() {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.HostKinds[0].GroupVersion().WithKind(k.HostKinds[0].Kind + "List"))
		if err := vc.List(ctx, list); meta.IsNoMatchError(err) {
			continue // a kind whose CRD the syncer copies at its start: no objects yet
		} else if err != nil {
			return fmt.Errorf("%s: %w", k.Name, err)
		}
		for _, o := range list.Items {
			from := syncer.PatchesRef(mapping.Ref{Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()})
			live[from] = true
			store.SetReferences(from, set.References(o.Object, o.GetNamespace()))
		}
	}
	for _, r := range store.Referrers() {
		if !live[r] {
			store.Forget(r)
		}
	}
	return nil
}

// pprofHandlers serve Go's profiles next to the metrics, under /debug/pprof/.
func pprofHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/heap":    pprof.Handler("heap"),
	}
}

// healthAddr maps "" (serve nothing) to controller-runtime's "0".
func healthAddr(a string) string {
	if a == "" {
		return "0"
	}
	return a
}

func ptrTrue() *bool                             { b := true; return &b }
func ptrDuration(d time.Duration) *time.Duration { return &d }

// serveMetricsAPI registers the metrics API in the virtual cluster (vc)
// and adds its server to mgr.
func serveMetricsAPI(ctx context.Context, mgr manager.Manager, vc client.Client, tr translate.Translator, vcfg, hcfg *rest.Config, o MetricsAPIOptions, serve config.MetricsServer, log logr.Logger) error {
	_, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("metrics API address %q: %w", o.Addr, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return fmt.Errorf("metrics API address %q: port must be 1 to 65535", o.Addr)
	}
	if ip := net.ParseIP(o.IP); ip == nil || ip.IsLoopback() || ip.IsUnspecified() {
		return fmt.Errorf("metrics API IP %q: want the IP the virtual API server reaches the syncer at, not loopback or unspecified", o.IP)
	}
	caPEM, err := os.ReadFile(o.TLS.ClientCAFile)
	if err != nil {
		return fmt.Errorf("metrics API: %w", err)
	}
	api, err := metricsapi.New(serve, tr, mgr.GetClient(), vcfg, hcfg, log)
	if err != nil {
		return err
	}
	if err := metricsapi.Register(ctx, vc, o.IP, int32(p), caPEM); err != nil {
		return err
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		return mtls.Serve(ctx, "metrics API", o.Addr, o.TLS, api)
	}))
}
