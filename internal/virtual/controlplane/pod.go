package controlplane

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/clustersync/clustersync/internal/pki"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// The control plane's ports inside its host pod (charts/virtual-cluster).
// kube-apiserver listens on every address of the pod at PodAPIServerPort
// (vCluster's 8443, behind the Service's 443); etcd on loopback only, with
// its plain-HTTP /health for the kubelet's probes at PodEtcdHealthPort.
var PodPorts = Ports{APIServer: 8443, Etcd: 2379, EtcdPeer: 2380, ControllerManager: 10257, Scheduler: 10259}

// PodEtcdHealthPort serves etcd's /health and /metrics over plain HTTP.
const PodEtcdHealthPort = 2381

// PodOptions describe the control plane of a virtual cluster that runs in a
// host pod.
type PodOptions struct {
	// Name is the virtual cluster's name: the StatefulSet's and the
	// Service's name in the host.
	Name string
	// Namespace is the host namespace the pod runs in.
	Namespace string
	// Dir is the data folder (the pod's data volume), e.g. /data.
	Dir string
	// PodIP is the pod's IP, which kube-apiserver advertises.
	PodIP string
	// ExtraSANs are more host names and IPs for the API server's
	// certificate (controlPlane.proxy.extraSANs).
	ExtraSANs []string
	// IngressHost is the host name of the API server's Ingress
	// (controlPlane.ingress.host when enabled), which its certificate
	// covers; "" for none.
	IngressHost string
	// Etcd, when set, replaces the embedded etcd.
	Etcd *ExternalEtcd
	// VirtualScheduler is controlPlane.advanced.virtualScheduler.enabled
	// (DisabledControllers).
	VirtualScheduler bool
	// ExtraArgs are flags added to the components' own
	// (controlPlane.distro.k8s.*.extraArgs).
	ExtraArgs ExtraArgs
}

// PodName is the control plane pod of virtual cluster name: the one pod of
// its StatefulSet.
func PodName(name string) string { return name + "-0" }

// CertsSecretName is the host Secret that keeps a pod control plane's
// certificates and keys across pod restarts (vCluster's NAME-certs).
func CertsSecretName(name string) string { return name + "-certs" }

// KubeconfigSecretName is the host Secret holding the tenant's
// cluster-admin kubeconfig (vCluster's vc-NAME), with keys config,
// certificate-authority, client-certificate and client-key.
func KubeconfigSecretName(name string) string { return "vc-" + name }

// ServiceURL is the address of the API server through its host Service, as
// pods of the host cluster reach it.
func ServiceURL(name, namespace string) string {
	return fmt.Sprintf("https://%s.%s.svc:443", name, namespace)
}

// podState is what the init step leaves in the data folder for the other
// components.
type podState struct {
	// ServiceCIDR is the host's service range, which the virtual cluster
	// shares.
	ServiceCIDR string `json:"serviceCIDR"`
}

func podStateFile(dir string) string { return filepath.Join(dir, "pod.json") }

// pkiFiles are the base names of the certificate folder that the certs
// Secret keeps.
var pkiFiles = []string{
	"ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "etcd-server.crt", "etcd-server.key",
	"apiserver-etcd-client.crt", "apiserver-etcd-client.key", "admin.crt", "admin.key",
	"controller-manager.crt", "controller-manager.key", "sa.key", "sa.pub",
	"apiserver-kubelet-client.crt", "apiserver-kubelet-client.key", "kubelet-server.crt", "kubelet-server.key",
	"front-proxy-client.crt", "front-proxy-client.key", "metrics-api.crt", "metrics-api.key",
	"scheduler.crt", "scheduler.key",
}

// PodSANs are the names and addresses the API server's certificate covers
// in a pod: the Service's cluster IP and DNS names (NAME, NAME.NS,
// NAME.NS.svc, NAME.NS.svc.cluster.local), the pod IP, and extra (IPs or
// host names). Duplicates are dropped.
func PodSANs(name, namespace, serviceIP, podIP string, extra []string) SANs {
	var s SANs
	add := func(v string) {
		if v == "" {
			return
		}
		if ip := net.ParseIP(v); ip != nil {
			if !slices.ContainsFunc(s.IPs, ip.Equal) {
				s.IPs = append(s.IPs, ip)
			}
		} else if !slices.Contains(s.DNSNames, v) {
			s.DNSNames = append(s.DNSNames, v)
		}
	}
	for _, v := range []string{serviceIP, podIP, name + "." + namespace, name + "." + namespace + ".svc",
		name + "." + namespace + ".svc.cluster.local"} {
		add(v)
	}
	for _, v := range extra {
		add(v)
	}
	return s
}

// coversSANs tells whether the PEM certificate cert names every entry of
// want (and is otherwise a certificate apiServerRequest would issue).
func coversSANs(certPEM []byte, name string, want SANs) bool {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	r := apiServerRequest(name, want)
	for _, d := range r.DNSNames {
		if !slices.Contains(cert.DNSNames, d) {
			return false
		}
	}
	for _, ip := range r.IPs {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

// InitPod prepares the data folder of a pod control plane (the chart's init
// container): it waits (up to a minute) for the host Service o.Name to have
// a cluster IP, detects the host's service range, takes the certificates
// from the Secret CertsSecretName (or creates them and that Secret), issues
// a new API server certificate when the one kept lacks a SAN of ServingSANs
// (and updates the Secret), writes the kubeconfigs of the components (API
// server at https://127.0.0.1:8443), and creates the Secret
// KubeconfigSecretName, when missing, with the tenant's kubeconfig for
// ServiceURL (the syncer then keeps it as exportKubeConfig says: Exporter). Both
// Secrets carry the vcluster.loft.sh/managed-by label, so that deleting the
// virtual cluster removes them. Errors name the object or file involved.
func InitPod(ctx context.Context, host kubernetes.Interface, o PodOptions) error {
	if o.Name == "" || o.Namespace == "" || o.Dir == "" {
		return errors.New("controlplane: Name, Namespace and Dir are required")
	}
	var svc *corev1.Service
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		svc, err = host.CoreV1().Services(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && svc.Spec.ClusterIP != "", err
	})
	if err != nil {
		return fmt.Errorf("host service %s/%s: %w", o.Namespace, o.Name, err)
	}
	cidr, err := DetectServiceCIDR(ctx, host, o.Namespace)
	if err != nil {
		return err
	}
	state, _ := json.Marshal(podState{ServiceCIDR: cidr})
	if err := pki.WriteFiles(map[string][]byte{podStateFile(o.Dir): state}); err != nil {
		return err
	}

	l := Layout{Dir: o.Dir}
	sans, err := servingSANs(ctx, host, o)
	if err != nil {
		return err
	}
	secrets := host.CoreV1().Secrets(o.Namespace)
	certs, err := secrets.Get(ctx, CertsSecretName(o.Name), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if err := os.RemoveAll(l.PKI("")); err != nil {
			return err
		}
		if err := generateCerts(l, o.Name, sans); err != nil {
			return fmt.Errorf("generate certificates in %s: %w", l.PKI(""), err)
		}
		certs = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: CertsSecretName(o.Name), Namespace: o.Namespace,
			Labels: map[string]string{translate.LabelManagedBy: o.Name}}, Data: map[string][]byte{}}
		for _, f := range pkiFiles {
			if certs.Data[f], err = os.ReadFile(l.PKI(f)); err != nil {
				return err
			}
		}
		if _, err := secrets.Create(ctx, certs, metav1.CreateOptions{}); err != nil {
			// Another start made them first: the next start takes those.
			return fmt.Errorf("create host secret %s/%s: %w", o.Namespace, certs.Name, err)
		}
	case err != nil:
		return fmt.Errorf("host secret %s/%s: %w", o.Namespace, CertsSecretName(o.Name), err)
	default:
		ca, err := pki.ParseCA(certs.Data["ca.crt"], certs.Data["ca.key"])
		if err != nil {
			return fmt.Errorf("host secret %s/%s: %w", o.Namespace, certs.Name, err)
		}
		// Reissue what is missing: certificates added after the Secret was
		// made, and the API server's when a SAN is missing.
		reissue := map[string]pki.Request{}
		for file, r := range laterRequests() {
			if len(certs.Data[file+".crt"]) == 0 || len(certs.Data[file+".key"]) == 0 {
				reissue[file] = r
			}
		}
		if !coversSANs(certs.Data["apiserver.crt"], o.Name, sans) {
			reissue["apiserver"] = apiServerRequest(o.Name, sans)
		}
		for file, r := range reissue {
			if certs.Data[file+".crt"], certs.Data[file+".key"], err = ca.Issue(r); err != nil {
				return err
			}
		}
		if len(reissue) > 0 {
			if _, err := secrets.Update(ctx, certs, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update host secret %s/%s with reissued certificates: %w", o.Namespace, certs.Name, err)
			}
		}
		files := map[string][]byte{}
		for _, f := range pkiFiles {
			if len(certs.Data[f]) == 0 {
				return fmt.Errorf("host secret %s/%s: key %s is missing or empty", o.Namespace, certs.Name, f)
			}
			files[l.PKI(f)] = certs.Data[f]
		}
		if err := pki.WriteFiles(files); err != nil {
			return err
		}
	}
	if err := ensureCerts(l, o.Name, fmt.Sprintf("https://127.0.0.1:%d", PodPorts.APIServer)); err != nil {
		return err
	}
	return ensureKubeconfigSecret(ctx, host, o, certs.Data)
}

// ensureKubeconfigSecret creates the tenant's kubeconfig Secret, when missing,
// from the certificate files in data.
func ensureKubeconfigSecret(ctx context.Context, host kubernetes.Interface, o PodOptions, data map[string][]byte) error {
	kc, err := clientcmd.Write(*pki.Kubeconfig(o.Name, ServiceURL(o.Name, o.Namespace), data["ca.crt"], data["admin.crt"], data["admin.key"]))
	if err != nil {
		return err
	}
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: KubeconfigSecretName(o.Name), Namespace: o.Namespace,
			Labels: map[string]string{translate.LabelManagedBy: o.Name}},
		Data: map[string][]byte{
			"config": kc, "certificate-authority": data["ca.crt"],
			"client-certificate": data["admin.crt"], "client-key": data["admin.key"],
		},
	}
	secrets := host.CoreV1().Secrets(o.Namespace)
	got, err := secrets.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, want, metav1.CreateOptions{})
		return wrapSecretErr(err, want)
	}
	if err != nil {
		return wrapSecretErr(err, want)
	}
	if got.Labels[translate.LabelManagedBy] != o.Name {
		return fmt.Errorf("host secret %s/%s exists and is not managed by virtual cluster %s (label %s); rename or remove it",
			o.Namespace, want.Name, o.Name, translate.LabelManagedBy)
	}
	// It exists: the syncer keeps it as exportKubeConfig says (Exporter),
	// which a rewrite here would undo at each start.
	return nil
}

func wrapSecretErr(err error, s *corev1.Secret) error {
	if err != nil {
		return fmt.Errorf("host secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// podControlPlaneOptions are the Options of a pod control plane whose init
// step has run.
func podControlPlaneOptions(o PodOptions) (Options, error) {
	data, err := os.ReadFile(podStateFile(o.Dir))
	if err != nil {
		return Options{}, fmt.Errorf("%w (the init container writes it)", err)
	}
	var st podState
	if err := json.Unmarshal(data, &st); err != nil || st.ServiceCIDR == "" {
		return Options{}, fmt.Errorf("%s: no service range recorded (%v)", podStateFile(o.Dir), err)
	}
	return Options{Dir: o.Dir, Name: o.Name, ServiceCIDR: st.ServiceCIDR, Etcd: o.Etcd,
		BindAddress: "0.0.0.0", AdvertiseAddress: o.PodIP}, nil
}

// PodAPIServerArgs are kube-apiserver's flags in a pod control plane.
func PodAPIServerArgs(o PodOptions) ([]string, error) {
	opts, err := podControlPlaneOptions(o)
	if err != nil {
		return nil, err
	}
	if opts.AdvertiseAddress == "" {
		return nil, errors.New("controlplane: the pod IP is required (POD_IP)")
	}
	l := Layout{Dir: o.Dir}
	etcdServers := "https://127.0.0.1:" + strconv.Itoa(PodPorts.Etcd)
	etcdTLS := EtcdTLS{CAFile: l.PKI("ca.crt"), CertFile: l.PKI("apiserver-etcd-client.crt"), KeyFile: l.PKI("apiserver-etcd-client.key")}
	if o.Etcd != nil {
		etcdServers, etcdTLS = joinURLs(o.Etcd.Endpoints), o.Etcd.TLS
	}
	return append(apiServerArgs(l, opts, PodPorts, etcdServers, etcdTLS), o.ExtraArgs.APIServer...), nil
}

// PodControllerManagerArgs are kube-controller-manager's flags in a pod
// control plane (listening on every address, for the kubelet's probe),
// the controllers of DisabledControllers(o.VirtualScheduler) off.
func PodControllerManagerArgs(o PodOptions) []string {
	return append(controllerManagerArgs(Layout{Dir: o.Dir}, PodPorts, "0.0.0.0", o.VirtualScheduler), o.ExtraArgs.ControllerManager...)
}

// PodSchedulerArgs are kube-scheduler's flags in a pod control plane
// (listening on every address, for the kubelet's probe).
func PodSchedulerArgs(o PodOptions) []string {
	return append(schedulerArgs(Layout{Dir: o.Dir}, PodPorts, "0.0.0.0"), o.ExtraArgs.Scheduler...)
}

// RunPodEtcd runs the embedded etcd of a pod control plane until ctx ends
// or etcd fails: clients over TLS on 127.0.0.1:2379, /health on
// PodEtcdHealthPort of every address, log on stderr.
func RunPodEtcd(ctx context.Context, o PodOptions) error {
	metrics := &url.URL{Scheme: "http", Host: net.JoinHostPort("0.0.0.0", strconv.Itoa(PodEtcdHealthPort))}
	e, err := startEtcd(Layout{Dir: o.Dir}, PodPorts.Etcd, PodPorts.EtcdPeer, "stderr", metrics, o.ExtraArgs.Etcd)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-ctx.Done():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("embedded etcd: %w", err)
	}
}

// GOGC is the Go garbage collector's target percentage (the GOGC
// environment variable, https://pkg.go.dev/runtime#hdr-Environment_Variables)
// of every process of the control plane pod (kube-apiserver,
// kube-controller-manager, kube-scheduler, etcd, the syncer, CoreDNS) and
// of `clustersync syncer` wherever it runs, unless the user sets GOGC
// (controlPlane.statefulSet.env): a heap grows to 1.25
// times what is live before a collection instead of Go's default 2 times.
// Measured with `make bench-vcluster` (test/bench/vcluster, 2026-11-28, 2
// cores): the pod's working set 2 minutes after ready 329 MiB at Go's
// default 100, 281 MiB at 50, 249 MiB at 25 (kube-apiserver 194 → 138
// MiB); after 1,000 Secrets and a 100-replica Deployment 416, 338 and 293
// MiB; CPU per synced Secret 3.35 ms at 100, 3.53 ms at 25, sync
// throughput unchanged within the runs' spread (252–291 objects/s). The
// price is start-up: kube-apiserver took 4.2–6.0 s (mean 5.5 s) from its
// start to /readyz at 25 against 3.5–3.8 s at 100 (6 and 3 `virtual
// create` runs on the local host, 2026-11-29), its heap growing from
// nothing in 1.25-fold steps, each one a collection.
const GOGC = 25

// SetDefaultGOGC sets GOGC for this process and, through the environment,
// for the binaries it runs or replaces itself with, unless the environment
// already sets GOGC, which then wins.
func SetDefaultGOGC() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	_ = os.Setenv("GOGC", strconv.Itoa(GOGC))
	debug.SetGCPercent(GOGC)
}
