package ekstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http/httptest"
	"sync"
	"time"
)

// Default values used when Options leaves them empty.
const (
	// DefaultAccountID is the account ID used in ARNs when Options.AccountID is empty.
	DefaultAccountID = "123456789012"
	// DefaultRegion is the region used in ARNs when Options.Region is empty.
	DefaultRegion = "us-east-1"
	// DefaultVersion is the Kubernetes version of a cluster created without one.
	DefaultVersion = "1.33"
)

// Cluster, node group, add-on and update statuses, as EKS spells them.
const (
	// StatusCreating is the status of a resource being created.
	StatusCreating = "CREATING"
	// StatusActive is the status of a ready resource.
	StatusActive = "ACTIVE"
	// StatusDeleting is the status of a resource being deleted.
	StatusDeleting = "DELETING"
	// StatusFailed is the EKS failure status; the emulator never sets it.
	StatusFailed = "FAILED"
	// StatusUpdating is the status of a cluster or node group with an
	// update in progress.
	StatusUpdating = "UPDATING"
	// UpdateInProgress is the status of a running update.
	UpdateInProgress = "InProgress"
	// UpdateSuccessful is the status of a finished update.
	UpdateSuccessful = "Successful"
	// UpdateFailed is the status of an update that ended without effect
	// (only after FailUpdates).
	UpdateFailed = "Failed"
)

// Options configures a Server. The zero value is usable: no delays (every
// transition happens on the next read), the real clock, DefaultAccountID and
// DefaultRegion.
type Options struct {
	// CreateDelay is how long clusters, node groups and add-ons stay CREATING.
	CreateDelay time.Duration
	// UpdateDelay is how long an update stays InProgress.
	UpdateDelay time.Duration
	// DeleteDelay is how long clusters, node groups and add-ons stay DELETING
	// before they disappear.
	DeleteDelay time.Duration
	// Now is the clock; state transitions are evaluated against it whenever
	// the server is read or written. Default time.Now.
	Now func() time.Time
	// AccountID is the account in ARNs. Default DefaultAccountID.
	AccountID string
	// Region is the region in ARNs. Default DefaultRegion.
	Region string
	// EndpointFor returns the Kubernetes API endpoint reported for a cluster.
	// Default "https://<name>.eks.local".
	EndpointFor func(cluster string) string
	// CertificateAuthorityFor returns the PEM CA bundle reported (base64
	// encoded, as EKS does) for a cluster. Default: a self-signed CA
	// generated once per Server, see Server.CACertPEM.
	CertificateAuthorityFor func(cluster string) []byte
	// StackCreateDelay is how long CloudFormation stacks stay
	// CREATE_IN_PROGRESS.
	StackCreateDelay time.Duration
	// StackDeleteDelay is how long CloudFormation stacks stay
	// DELETE_IN_PROGRESS before they are deleted.
	StackDeleteDelay time.Duration
}

// Server is an emulated EKS endpoint. Create it with New, point the SDK at
// URL with BaseEndpoint, and Close it when done. All methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL of the emulator, e.g. http://127.0.0.1:41234.
	URL string

	opts   Options
	ts     *httptest.Server
	caPEM  []byte
	mu     sync.Mutex
	state  map[string]*cluster
	calls  map[string]int
	faults map[string]*fault
	seq    int
	// updateFaults are the failures the next updates end with (FailUpdates).
	updateFaults []updateFault

	// CloudFormation: live stacks by name, deleted ones (found by ID),
	// injected creation failures by stack name.
	stacks        map[string]*stack
	deletedStacks []*stack
	stackFaults   map[string]string
	// EC2: launch templates by ID.
	templates map[string]*launchTemplate
}

// updateFault is the error detail an update fails with.
type updateFault struct{ code, message string }

type fault struct {
	errType string
	status  int
	n       int
}

type cluster struct {
	name, arn, version, roleArn, platformVersion, status, token string
	createdAt, readyAt, deleteAt                                time.Time
	subnets, securityGroups, publicCidrs                        []string
	public, private                                             bool
	vpcID, clusterSG                                            string
	logging                                                     map[string]bool
	tags                                                        map[string]string
	encryption                                                  []map[string]any
	ipFamily, serviceCidr                                       string
	accessConfig                                                map[string]any
	nodegroups                                                  map[string]*nodegroup
	addons                                                      map[string]*addon
	updates                                                     []*update
}

type nodegroup struct {
	name, arn, version, releaseVersion, status, token string
	capacityType, amiType, nodeRole, asgName          string
	createdAt, modifiedAt, readyAt, deleteAt          time.Time
	minSize, maxSize, desired                         int32
	diskSize                                          *int32
	instanceTypes, subnets                            []string
	labels, tags                                      map[string]string
	taints                                            []wireTaint
	remoteAccess                                      *wireRemoteAccess
	launchTemplate                                    *wireLaunchTemplate
}

type addon struct {
	name, arn, version, status, roleArn, config string
	createdAt, modifiedAt, readyAt, deleteAt    time.Time
	tags                                        map[string]string
}

type update struct {
	id, status, typ, nodegroup, addon, token string
	params                                   []wireUpdateParam
	createdAt, doneAt                        time.Time
	apply                                    func(now time.Time)
	// fail, when set, is what the update ends Failed with, unapplied.
	fail *updateFault
}

// New starts an emulator on a local httptest server.
func New(opts Options) *Server {
	s := NewUnstarted(opts)
	s.ts = httptest.NewServer(s.Handler())
	s.URL = s.ts.URL
	return s
}

// NewUnstarted returns an emulator without a listener, for callers that
// mount Handler themselves. URL is empty and Close is a no-op.
func NewUnstarted(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AccountID == "" {
		opts.AccountID = DefaultAccountID
	}
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	if opts.EndpointFor == nil {
		opts.EndpointFor = func(c string) string { return "https://" + c + ".eks.local" }
	}
	s := &Server{
		opts:   opts,
		state:  map[string]*cluster{},
		calls:  map[string]int{},
		faults: map[string]*fault{},

		stacks: map[string]*stack{}, stackFaults: map[string]string{},
		templates: map[string]*launchTemplate{},
	}
	s.caPEM = generateCA()
	return s
}

// Close shuts the HTTP server down.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.Close()
	}
}

// CACertPEM returns the PEM of the self-signed CA generated for this server,
// which DescribeCluster reports (base64) unless
// Options.CertificateAuthorityFor is set.
func (s *Server) CACertPEM() []byte { return append([]byte(nil), s.caPEM...) }

// FailNext makes the next n calls of operation (an EKS, CloudFormation or
// EC2 operation name such as "UpdateClusterConfig", "CreateStack",
// "CreateLaunchTemplateVersion") fail with the given error type (EKS: sent
// in the X-Amzn-ErrorType header; CloudFormation and EC2: the error Code of
// the XML body, e.g. "Throttling" or "RequestLimitExceeded") and HTTP
// status, before touching any state. Injected failures are counted by
// Calls. status 0 means 400; n <= 0 clears the fault. The SDK retries
// throttling errors (and 5xx) by itself, so n failures cost n extra calls
// unless the client disables retries.
func (s *Server) FailNext(operation, errType string, status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		delete(s.faults, operation)
		return
	}
	s.faults[operation] = &fault{errType: errType, status: status, n: n}
}

// FailUpdates makes the next n updates started (by any Update* call or
// console method) end Failed when they would have succeeded, without
// changing the resource, with one error detail of the given code (an EKS
// ErrorCode such as "InsufficientFreeAddresses") and message, as
// DescribeUpdate reports a failed update. n <= 0 clears pending failures.
func (s *Server) FailUpdates(n int, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updateFaults = nil
	for range n {
		s.updateFaults = append(s.updateFaults, updateFault{code: code, message: message})
	}
}

// Calls returns how many HTTP calls each operation received (including
// failed and fault-injected ones), keyed by operation name (EKS,
// CloudFormation and EC2 names do not collide).
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

func generateCA() []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
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

func shortHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:17]
}

func (s *Server) clusterARN(name string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", s.opts.Region, s.opts.AccountID, name)
}

func (s *Server) nodegroupARN(c, ng string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:nodegroup/%s/%s/%s", s.opts.Region, s.opts.AccountID, c, ng, newUUID())
}

func (s *Server) addonARN(c, a string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:addon/%s/%s/%s", s.opts.Region, s.opts.AccountID, c, a, newUUID())
}

// settle applies every state transition that is due at the current time.
// Called with s.mu held.
func (s *Server) settle() time.Time {
	now := s.opts.Now()
	for name, c := range s.state {
		if c.status == StatusDeleting && !now.Before(c.deleteAt) {
			delete(s.state, name)
			continue
		}
		if c.status == StatusCreating && !now.Before(c.readyAt) {
			c.status = StatusActive
		}
		for _, u := range c.updates {
			if u.status == UpdateInProgress && !now.Before(u.doneAt) {
				u.status = UpdateSuccessful
				if u.fail != nil {
					u.status, u.apply = UpdateFailed, nil
				}
				if u.apply != nil {
					u.apply(u.doneAt)
					u.apply = nil
				}
			}
		}
		if c.status == StatusUpdating && c.inProgress("", "") == nil {
			c.status = StatusActive
		}
		for n, ng := range c.nodegroups {
			switch {
			case ng.status == StatusDeleting && !now.Before(ng.deleteAt):
				delete(c.nodegroups, n)
			case ng.status == StatusCreating && !now.Before(ng.readyAt):
				ng.status = StatusActive
			case ng.status == StatusUpdating && c.inProgress(n, "") == nil:
				ng.status = StatusActive
			}
		}
		for n, a := range c.addons {
			switch {
			case a.status == StatusDeleting && !now.Before(a.deleteAt):
				delete(c.addons, n)
			case a.status == StatusCreating && !now.Before(a.readyAt):
				a.status = StatusActive
			}
		}
	}
	s.settleStacks(now)
	return now
}

// inProgress returns the in-progress update of the given scope (cluster
// scope when ng and addon are empty), or nil.
func (c *cluster) inProgress(ng, addon string) *update {
	for _, u := range c.updates {
		if u.status == UpdateInProgress && u.nodegroup == ng && u.addon == addon {
			return u
		}
	}
	return nil
}

func (c *cluster) findUpdateByToken(token, ng string) *update {
	if token == "" {
		return nil
	}
	for _, u := range c.updates {
		if u.token == token && u.nodegroup == ng {
			return u
		}
	}
	return nil
}

func (s *Server) newUpdate(c *cluster, now time.Time, typ, ng, token string, params []wireUpdateParam, apply func(time.Time)) *update {
	u := &update{
		id: newUUID(), status: UpdateInProgress, typ: typ, nodegroup: ng, token: token,
		params: params, createdAt: now, doneAt: now.Add(s.opts.UpdateDelay), apply: apply,
	}
	if len(s.updateFaults) > 0 {
		u.fail, s.updateFaults = &s.updateFaults[0], s.updateFaults[1:]
	}
	c.updates = append(c.updates, u)
	return u
}

func (u *update) wire() wireUpdate {
	params := u.params
	if params == nil {
		params = []wireUpdateParam{}
	}
	errs := []any{}
	if u.fail != nil && u.status == UpdateFailed {
		errs = append(errs, map[string]any{"errorCode": u.fail.code, "errorMessage": u.fail.message, "resourceIds": []string{}})
	}
	return wireUpdate{ID: u.id, Status: u.status, Type: u.typ, Params: params, CreatedAt: ep(u.createdAt), Errors: errs}
}

var logTypes = []string{"api", "audit", "authenticator", "controllerManager", "scheduler"}

func (s *Server) wireCluster(c *cluster) wireCluster {
	logging := wireLoggingOf(c.logging)
	w := wireCluster{
		Name: c.name, Arn: c.arn, CreatedAt: ep(c.createdAt), Version: c.version, RoleArn: c.roleArn,
		ResourcesVpcConfig: wireVpcResponse{
			SubnetIDs: nonNil(c.subnets), SecurityGroupIDs: nonNil(c.securityGroups),
			ClusterSecurityGroupID: c.clusterSG, VpcID: c.vpcID,
			EndpointPublicAccess: c.public, EndpointPrivateAccess: c.private,
			PublicAccessCidrs: nonNil(c.publicCidrs),
		},
		KubernetesNetworkConfig: wireKubeNetworkResponse{IPFamily: c.ipFamily},
		Logging:                 logging,
		Status:                  c.status,
		ClientRequestToken:      c.token,
		PlatformVersion:         c.platformVersion,
		Tags:                    copyMap(c.tags),
		EncryptionConfig:        c.encryption,
		Health:                  wireHealth{Issues: []any{}},
		AccessConfig:            c.accessConfig,
		UpgradePolicy:           map[string]string{"supportType": "STANDARD"},
	}
	if c.ipFamily == "ipv6" {
		w.KubernetesNetworkConfig.ServiceIpv6Cidr = "fd00:" + c.vpcID[4:8] + "::/108"
	} else {
		w.KubernetesNetworkConfig.ServiceIpv4Cidr = c.serviceCidr
	}
	// Like EKS, the endpoint, CA and OIDC issuer only appear once the
	// control plane exists.
	if c.status != StatusCreating {
		w.Endpoint = s.opts.EndpointFor(c.name)
		ca := s.caPEM
		if s.opts.CertificateAuthorityFor != nil {
			ca = s.opts.CertificateAuthorityFor(c.name)
		}
		w.CertificateAuthority = &wireCertificate{Data: base64.StdEncoding.EncodeToString(ca)}
		w.Identity = &wireIdentity{OIDC: wireOIDC{Issuer: fmt.Sprintf("https://oidc.eks.%s.amazonaws.com/id/%X", s.opts.Region, shortHash(c.arn)[:16])}}
	} else {
		w.CertificateAuthority = &wireCertificate{}
	}
	return w
}

func wireLoggingOf(l map[string]bool) wireLogging {
	var enabled, disabled []string
	for _, t := range logTypes {
		if l[t] {
			enabled = append(enabled, t)
		} else {
			disabled = append(disabled, t)
		}
	}
	logging := wireLogging{ClusterLogging: []wireLogSetup{}}
	if len(enabled) > 0 {
		logging.ClusterLogging = append(logging.ClusterLogging, wireLogSetup{Types: enabled, Enabled: ptr(true)})
	}
	if len(disabled) > 0 {
		logging.ClusterLogging = append(logging.ClusterLogging, wireLogSetup{Types: disabled, Enabled: ptr(false)})
	}
	return logging
}

func (ng *nodegroup) wire(c *cluster) wireNodegroup {
	w := wireNodegroup{
		NodegroupName: ng.name, NodegroupArn: ng.arn, ClusterName: c.name, Version: ng.version,
		ReleaseVersion: ng.releaseVersion, CreatedAt: ep(ng.createdAt), ModifiedAt: ep(ng.modifiedAt),
		Status: ng.status, CapacityType: ng.capacityType,
		ScalingConfig: wireScaling{MinSize: ptr(ng.minSize), MaxSize: ptr(ng.maxSize), DesiredSize: ptr(ng.desired)},
		InstanceTypes: ng.instanceTypes, Subnets: nonNil(ng.subnets), RemoteAccess: ng.remoteAccess,
		AmiType: ng.amiType, NodeRole: ng.nodeRole, Labels: copyMap(ng.labels), Taints: ng.taints,
		DiskSize: ng.diskSize, Health: wireHealth{Issues: []any{}},
		UpdateConfig: map[string]int32{"maxUnavailable": 1}, LaunchTemplate: ng.launchTemplate,
		Tags: copyMap(ng.tags),
	}
	if ng.status != StatusCreating {
		w.Resources = &wireNodegroupResources{AutoScalingGroups: []wireASG{{Name: ng.asgName}}}
		if ng.remoteAccess != nil {
			w.Resources.RemoteAccessSecurityGroup = "sg-" + shortHash(ng.arn, "ra")
		}
	}
	return w
}

func (a *addon) wire(c *cluster) wireAddon {
	return wireAddon{
		AddonName: a.name, ClusterName: c.name, Status: a.status, AddonVersion: a.version,
		Health: wireHealth{Issues: []any{}}, AddonArn: a.arn, CreatedAt: ep(a.createdAt),
		ModifiedAt: ep(a.modifiedAt), ServiceAccountRoleArn: a.roleArn, Tags: copyMap(a.tags),
		ConfigurationValues: a.config,
	}
}

func ptr[T any](v T) *T { return &v }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return append([]string(nil), s...)
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
