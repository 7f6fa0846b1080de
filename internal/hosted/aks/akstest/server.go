package akstest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/clustersync/clustersync/internal/pki"
)

// Defaults used when Options leaves a field empty, and the versions the
// emulator reports.
const (
	// DefaultLocation is the Azure region of resource groups and clusters
	// that ImportCluster creates without one.
	DefaultLocation = "eastus"
	// DefaultKubernetesVersion is the kubernetesVersion of a cluster created
	// without one.
	DefaultKubernetesVersion = "1.31"
	// DefaultVMSize is the vmSize of an agent pool created without one.
	DefaultVMSize = "Standard_DS2_v2"
	// LatestPatch is the patch version the emulator runs for a version
	// given without one: the currentKubernetesVersion of "1.31" is
	// "1.31.2", and so is a pool's currentOrchestratorVersion.
	LatestPatch = 2
	// DefaultRetryAfter is the Retry-After-Ms the server sends when
	// Options.RetryAfter is zero.
	DefaultRetryAfter = 50 * time.Millisecond
	// APIVersion is the Microsoft.ContainerService api-version the
	// emulator models (armcontainerservice v6); any api-version is
	// accepted on requests.
	APIVersion = "2025-02-01"
	// ResourcesAPIVersion is the Microsoft.Resources api-version of the
	// resource-group calls (armresources v1).
	ResourcesAPIVersion = "2021-04-01"
)

// provisioningState values, as ARM and AKS spell them.
const (
	// StateSucceeded is the provisioningState of a resource at rest.
	StateSucceeded = "Succeeded"
	// StateFailed is the provisioningState of a resource whose last
	// operation failed (only after FailOperations); it is final, so the
	// resource accepts new operations.
	StateFailed = "Failed"
	// StateCanceled is the status of an operation cut short by the
	// deletion of its resource group.
	StateCanceled = "Canceled"
	// StateCreating is the provisioningState while a resource is created.
	StateCreating = "Creating"
	// StateUpdating is the provisioningState of an update that neither
	// changes a Kubernetes version nor only scales.
	StateUpdating = "Updating"
	// StateUpgrading is the provisioningState while a Kubernetes version
	// changes.
	StateUpgrading = "Upgrading"
	// StateScaling is the provisioningState while only node counts change.
	StateScaling = "Scaling"
	// StateDeleting is the provisioningState while a resource is deleted.
	StateDeleting = "Deleting"
	// OperationInProgress is the status of a running long-running
	// operation, as the Azure-AsyncOperation URL reports it.
	OperationInProgress = "InProgress"
)

// Options configures a Server. The zero value is usable: no delays (an
// operation completes at the next request), the real clock,
// DefaultLocation, plain HTTP.
type Options struct {
	// Now is the clock; operations complete when Now reaches their start
	// plus the delay, evaluated on every request and Go API call.
	// Default time.Now.
	Now func() time.Time
	// CreateDelay is how long clusters and agent pools stay Creating.
	CreateDelay time.Duration
	// UpdateDelay is how long a cluster or agent pool stays Updating,
	// Upgrading or Scaling (PUT on an existing resource, updateTags).
	UpdateDelay time.Duration
	// DeleteDelay is how long clusters, agent pools and resource groups
	// stay Deleting before they disappear.
	DeleteDelay time.Duration
	// RetryAfter is sent as the Retry-After-Ms header (milliseconds) of
	// every long-running operation answer and of the operation status
	// while it runs; the SDK waits that long between polls. Default
	// DefaultRetryAfter (50 ms).
	RetryAfter time.Duration
	// Location is the region ImportCluster uses when its spec has none.
	// Default DefaultLocation.
	Location string
	// EndpointFor returns the Kubernetes API server URL written into a
	// cluster's kubeconfig (listClusterAdminCredential). Default
	// "https://<fqdn>:443", fqdn being
	// "<dnsPrefix>-<8 hex>.hcp.<location>.azmk8s.io".
	EndpointFor func(cluster string) string
	// CertificateAuthorityFor returns the PEM CA bundle written (base64) as
	// certificate-authority-data into a cluster's kubeconfig. Default: the
	// CA generated for this Server, see CACertPEM.
	CertificateAuthorityFor func(cluster string) []byte
	// TokenFor returns the bearer token written into a cluster's
	// kubeconfig for role ("clusterAdmin", "clusterUser"), e.g. one the
	// test's API server accepts. Default "<role>-<cluster>".
	TokenFor func(cluster, role string) string
	// TLS makes New and Start serve HTTPS with a certificate signed by the
	// Server's CA (CACertPEM) for 127.0.0.1, ::1, localhost and the
	// listening host.
	TLS bool
}

// Server is an emulated Azure Resource Manager endpoint for AKS. Create it
// with New (or NewTLS, or NewUnstarted and Start), point the SDK's
// cloud.ResourceManager endpoint at URL, and Close it when done. All
// methods are safe for concurrent use.
type Server struct {
	// URL is the base URL of the emulator, e.g. http://127.0.0.1:41234;
	// empty until the Server is started.
	URL string

	opts  Options
	caPEM []byte
	ca    *pki.CA

	hs *http.Server
	ln net.Listener

	mu       sync.Mutex
	groups   map[string]*group
	clusters map[string]*cluster
	ops      map[string]*operation
	running  []*operation
	calls    map[string]int
	faults   map[string]*fault
	opFaults []opFault
	policy   map[string]string
}

// fault is an error injected by FailNext.
type fault struct {
	status        int
	code, message string
	n             int
}

// opFault is the error an operation ends Failed with (FailOperations).
type opFault struct{ code, message string }

// New starts an emulator on 127.0.0.1 (a free port), HTTPS if opts.TLS.
// It panics if it cannot listen, like httptest.NewServer.
func New(opts Options) *Server {
	s := NewUnstarted(opts)
	if err := s.Start("127.0.0.1:0"); err != nil {
		panic("akstest: " + err.Error())
	}
	return s
}

// NewTLS is New with Options.TLS set: the server speaks HTTPS with a
// certificate signed by CACertPEM; Client returns an *http.Client that
// trusts it (use it as the SDK's ClientOptions.Transport).
func NewTLS(opts Options) *Server {
	opts.TLS = true
	return New(opts)
}

// NewUnstarted returns an emulator that does not listen yet: call Start,
// or mount Handler on a server of your own (with TLSConfig for HTTPS).
// URL is empty until Start.
func NewUnstarted(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = DefaultRetryAfter
	}
	if opts.Location == "" {
		opts.Location = DefaultLocation
	}
	opts.Location = normLocation(opts.Location)
	s := &Server{
		opts:     opts,
		groups:   map[string]*group{},
		clusters: map[string]*cluster{},
		ops:      map[string]*operation{},
		calls:    map[string]int{},
		faults:   map[string]*fault{},
	}
	ca, err := pki.NewCA("akstest")
	if err != nil {
		panic(err) // crypto/rand failing; New panics like httptest
	}
	s.ca, s.caPEM = ca, ca.CertPEM()
	return s
}

// Start listens on addr (host:port; port 0 picks a free one) and serves
// the emulator there in the background, HTTPS if Options.TLS; it sets URL
// ("http://" or "https://" and the listening address). Calling Start on a
// started Server is an error.
func (s *Server) Start(addr string) error {
	if s.hs != nil {
		return errors.New("server already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.ln = ln
	s.hs = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	if s.opts.TLS {
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		cfg, err := s.TLSConfig(host)
		if err != nil {
			_ = ln.Close()
			return err
		}
		s.ln = tls.NewListener(ln, cfg)
		scheme = "https"
	}
	s.URL = scheme + "://" + ln.Addr().String()
	go func() { _ = s.hs.Serve(s.ln) }()
	return nil
}

// Close stops the listener started by New or Start and closes its open
// connections; it is a no-op for an unstarted Server.
func (s *Server) Close() {
	if s.hs != nil {
		_ = s.hs.Close()
	}
}

// CACertPEM returns the PEM of the self-signed CA generated for this
// Server. It signs the HTTPS certificate (Options.TLS) and is the
// certificate-authority-data of cluster kubeconfigs unless
// Options.CertificateAuthorityFor is set.
func (s *Server) CACertPEM() []byte { return append([]byte(nil), s.caPEM...) }

// TLSConfig returns a server TLS configuration whose certificate, signed by
// CACertPEM, is valid for 127.0.0.1, ::1, localhost and the given extra
// hosts (names or IP addresses), for callers that serve Handler
// themselves.
func (s *Server) TLSConfig(hosts ...string) (*tls.Config, error) {
	r := pki.Request{CommonName: "akstest", Server: true, IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !ip.IsUnspecified() {
				r.IPs = append(r.IPs, ip)
			}
		} else if h != "" {
			r.DNSNames = append(r.DNSNames, h)
		}
	}
	certPEM, keyPEM, err := s.ca.Issue(r)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Client returns an HTTP client for the Server: it trusts CACertPEM, so it
// works for HTTPS too. It implements the SDK's policy.Transporter.
func (s *Server) Client() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.caPEM)
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}
}

// FailNext makes the next n HTTP calls of operation (a name as Calls
// counts them, e.g. "managedClusters.createOrUpdate") fail with the given
// HTTP status and ARM error code and message, before touching any state.
// Injected failures are counted by Calls. status 0 means 500; an empty
// message gets a generic one; n <= 0 clears the fault. The SDK retries 408,
// 429, 500, 502, 503 and 504 up to three times by itself, so n such
// failures cost n extra calls; injected answers with those statuses carry
// Retry-After-Ms (Options.RetryAfter) so the retries are quick.
func (s *Server) FailNext(operation string, status int, code, message string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		delete(s.faults, operation)
		return
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if message == "" {
		message = fmt.Sprintf("Injected failure of %s (HTTP %d).", operation, status)
	}
	s.faults[operation] = &fault{status: status, code: code, message: message, n: n}
}

// FailOperations makes the next n long-running operations of clusters and
// agent pools (PUT, PATCH, DELETE) that start after this call end Failed
// instead of Succeeded, without applying their change: the operation
// status is "Failed" with error {code, message}, so the SDK's
// PollUntilDone returns an *azcore.ResponseError with that ErrorCode, and
// the resource's provisioningState becomes Failed. n <= 0 clears pending
// failures.
func (s *Server) FailOperations(n int, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opFaults = nil
	for range n {
		s.opFaults = append(s.opFaults, opFault{code: code, message: message})
	}
}

// SetPolicyTags installs an emulated Azure Policy with the "add" effect on
// managed-cluster tags: every write of a cluster's tags (create, PUT,
// updateTags) that lacks one of these keys gets it added with the given
// value, as a Modify policy does to the request, so a client that removes
// them sees them come back. Existing clusters are not remediated. nil or
// empty removes the policy.
func (s *Server) SetPolicyTags(tags map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.policy = copyTags(tags)
}

// Calls returns how many HTTP calls each operation received (including
// failed, unauthenticated and fault-injected ones), keyed by operation name:
// "resourceGroups.get", "resourceGroups.checkExistence",
// "resourceGroups.createOrUpdate", "resourceGroups.delete",
// "resourceGroups.list", "managedClusters.get", "managedClusters.list",
// "managedClusters.listByResourceGroup", "managedClusters.createOrUpdate",
// "managedClusters.updateTags", "managedClusters.delete",
// "managedClusters.listClusterAdminCredential",
// "managedClusters.listClusterUserCredential", "agentPools.get",
// "agentPools.list", "agentPools.createOrUpdate", "agentPools.delete",
// "operations.get" (Azure-AsyncOperation polls), "operationResults.get"
// (Location polls) and "unknown" (paths the emulator does not serve).
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// ResetCalls zeroes the counters returned by Calls.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = map[string]int{}
}

func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// hashOf is a stable hex digest of parts, n characters long.
func hashOf(n int, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strings.ToLower(p)))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:n]
}

// normLocation turns "East US" into "eastus", as ARM normalizes regions.
func normLocation(l string) string {
	return strings.ToLower(strings.ReplaceAll(l, " ", ""))
}

func copyTags(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
