package realnode

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// The node's resource metrics: kubernetes-sigs/metrics-server
// (https://github.com/kubernetes-sigs/metrics-server) runs beside the
// kubelet, scrapes the kubelet's /metrics/resource and serves the
// metrics.k8s.io API (`kubectl top`) through the API server's aggregation
// layer: APIService v1beta1.metrics.k8s.io leads to Service
// kube-system/metrics-server, whose one endpoint is the node IP, port
// MetricsServerPort.
const (
	// MetricsServer is metrics-server's component name.
	MetricsServer = "metrics-server"
	// MetricsServerPort is its HTTPS port, on the node IP.
	MetricsServerPort = 4443
	// MetricsServerNamespace and MetricsServerService name the Service
	// the APIService leads to (upstream's names).
	MetricsServerNamespace = "kube-system"
	MetricsServerService   = "metrics-server"
	// MetricsAPIService is the APIService metrics-server serves.
	MetricsAPIService = "v1beta1.metrics.k8s.io"
	// MetricResolution is how often metrics-server scrapes the kubelet
	// (its minimum): a pod's figures appear about two resolutions after
	// it starts.
	MetricResolution = 10 * time.Second
)

func (o Options) metricsFile(name string) string { return o.path("metrics-server", name) }

func metricsServerKubeconfig(o Options) string { return o.metricsFile("kubeconfig.yaml") }

// metricsServerArgs are metrics-server's arguments: out of cluster with its
// kubeconfig (also for delegated authentication and authorization, which
// read the API server's front-proxy CA), serving on the node IP with a
// certificate of the cluster CA, scraping only this node's kubelet (the
// host's fake nodes have none) by its InternalIP, verifying the kubelet's
// serving certificate with the cluster CA. A scrape must end within half
// the resolution (metrics-server wants it shorter than the resolution).
func metricsServerArgs(o Options, caFile string) []string {
	k := metricsServerKubeconfig(o)
	return []string{"--kubeconfig", k, "--authentication-kubeconfig", k, "--authorization-kubeconfig", k,
		"--bind-address", o.NodeIP().String(), "--secure-port", strconv.Itoa(MetricsServerPort),
		"--tls-cert-file", o.metricsFile("serving.crt"), "--tls-private-key-file", o.metricsFile("serving.key"),
		"--kubelet-preferred-address-types", "InternalIP", "--kubelet-certificate-authority", caFile,
		"--node-selector", "kubernetes.io/hostname=" + o.NodeName,
		"--metric-resolution", MetricResolution.String(), "--kubelet-request-timeout", (MetricResolution / 2).String(), "--v=1"}
}

// metricsServerReady reports whether metrics-server answers /livez on the
// node IP with its certificate of the cluster CA.
func metricsServerReady(o Options, caFile string) bool {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return false
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Get("https://" + net.JoinHostPort(o.NodeIP().String(), strconv.Itoa(MetricsServerPort)) + "/livez")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// ensureMetricsObjects registers metrics-server with the API server,
// unless already registered: Service MetricsServerNamespace/
// MetricsServerService without a selector, its EndpointSlice (the node IP,
// MetricsServerPort) and APIService MetricsAPIService leading to it, with
// the cluster CA (caPEM) as the CA bundle.
func ensureMetricsObjects(ctx context.Context, cfg *rest.Config, o Options, caPEM []byte) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	create := func(what string, err error) error { return created("metrics", what, err) }
	meta := metav1.ObjectMeta{Name: MetricsServerService, Namespace: MetricsServerNamespace, Labels: map[string]string{"k8s-app": "metrics-server"}}
	if err := create("service "+MetricsServerService, func() error {
		_, err := cs.CoreV1().Services(MetricsServerNamespace).Create(ctx, &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(MetricsServerPort), Protocol: corev1.ProtocolTCP}},
		}}, metav1.CreateOptions{})
		return err
	}()); err != nil {
		return err
	}
	if err := create("endpoint slice "+MetricsServerService, func() error {
		_, err := cs.DiscoveryV1().EndpointSlices(MetricsServerNamespace).Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: MetricsServerService, Namespace: MetricsServerNamespace, Labels: map[string]string{
				discoveryv1.LabelServiceName: MetricsServerService, discoveryv1.LabelManagedBy: "realnode.clustersync.io"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{o.NodeIP().String()}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To[int32](MetricsServerPort), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}, metav1.CreateOptions{})
		return err
	}()); err != nil {
		return err
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": MetricsAPIService, "labels": map[string]any{"k8s-app": "metrics-server"}},
		"spec": map[string]any{
			"group": "metrics.k8s.io", "version": "v1beta1",
			"service":              map[string]any{"name": MetricsServerService, "namespace": MetricsServerNamespace, "port": int64(443)},
			"caBundle":             base64.StdEncoding.EncodeToString(caPEM),
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
		},
	}}
	return create("APIService "+MetricsAPIService, func() error {
		_, err := dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}).
			Create(ctx, apiService, metav1.CreateOptions{})
		return err
	}())
}
