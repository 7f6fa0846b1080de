package gketest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/hosted/hostedtest"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/clustersync/clustersync/internal/hosted/gke/gketest"
)

const (
	project = "proj-1"
	region  = "us-central1"
	zone    = "europe-west1-b"
)

type env struct {
	srv *gketest.Server
	clk *hostedtest.Clock
	cm  *container.ClusterManagerClient
	ctx context.Context
}

func setup(t *testing.T, opts gketest.Options) *env {
	t.Helper()
	clk := hostedtest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	srv := gketest.New(opts)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	cm, err := container.NewClusterManagerRESTClient(ctx, option.WithEndpoint(srv.URL), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cm.Close() })
	return &env{srv: srv, clk: clk, cm: cm, ctx: ctx}
}

func parent(location string) string { return "projects/" + project + "/locations/" + location }

func clusterPath(location, name string) string { return parent(location) + "/clusters/" + name }

func poolPath(location, cluster, pool string) string {
	return clusterPath(location, cluster) + "/nodePools/" + pool
}

func standardCluster(name string) *containerpb.Cluster {
	return &containerpb.Cluster{
		Name:           name,
		ResourceLabels: map[string]string{"team": "a", "env": "dev"},
		NodePools:      []*containerpb.NodePool{{Name: "pool-1", InitialNodeCount: 2}},
	}
}

func (e *env) create(t *testing.T, location string, c *containerpb.Cluster) *containerpb.Operation {
	t.Helper()
	op, err := e.cm.CreateCluster(e.ctx, &containerpb.CreateClusterRequest{Parent: parent(location), Cluster: c})
	if err != nil {
		t.Fatalf("CreateCluster %s: %v", c.GetName(), err)
	}
	return op
}

func (e *env) get(t *testing.T, location, name string) *containerpb.Cluster {
	t.Helper()
	c, err := e.cm.GetCluster(e.ctx, &containerpb.GetClusterRequest{Name: clusterPath(location, name)})
	if err != nil {
		t.Fatalf("GetCluster %s: %v", name, err)
	}
	return c
}

func (e *env) getOp(t *testing.T, location string, op *containerpb.Operation) *containerpb.Operation {
	t.Helper()
	got, err := e.cm.GetOperation(e.ctx, &containerpb.GetOperationRequest{Name: parent(location) + "/operations/" + op.GetName()})
	if err != nil {
		t.Fatalf("GetOperation %s: %v", op.GetName(), err)
	}
	return got
}

// wait advances the clock by d and polls op until it is DONE.
func (e *env) wait(t *testing.T, location string, op *containerpb.Operation, d time.Duration) *containerpb.Operation {
	t.Helper()
	e.clk.Advance(d)
	got := e.getOp(t, location, op)
	if got.GetStatus() != containerpb.Operation_DONE {
		t.Fatalf("operation %s is %v after %v, want DONE", op.GetName(), got.GetStatus(), d)
	}
	return got
}

// wantAPIError checks err is a *googleapi.Error with the code and reason
// (and message, when not empty).
func wantAPIError(t *testing.T, err error, code int, reason, message string) {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("error %v (%T) is not a *googleapi.Error", err, err)
	}
	if ge.Code != code {
		t.Errorf("code %d, want %d (%v)", ge.Code, code, err)
	}
	if len(ge.Errors) == 0 || ge.Errors[0].Reason != reason {
		t.Errorf("errors %+v, want reason %q", ge.Errors, reason)
	}
	if message != "" && ge.Message != message {
		t.Errorf("message %q, want %q", ge.Message, message)
	}
}

func fingerprint(labels map[string]string) string {
	var pairs []string
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	sum := sha256.Sum256([]byte(strings.Join(pairs, ",")))
	return hex.EncodeToString(sum[:])[:8]
}

func TestCreateLifecycle(t *testing.T) {
	e := setup(t, gketest.Options{CreateDelay: 10 * time.Minute, DeleteDelay: 5 * time.Minute})
	op := e.create(t, region, standardCluster("alpha"))
	if op.GetStatus() != containerpb.Operation_PENDING || op.GetOperationType() != containerpb.Operation_CREATE_CLUSTER {
		t.Fatalf("create answered %v %v, want PENDING CREATE_CLUSTER", op.GetStatus(), op.GetOperationType())
	}
	if !strings.HasPrefix(op.GetName(), "operation-") || op.GetStartTime() == "" || op.GetEndTime() != "" {
		t.Errorf("operation name %q start %q end %q", op.GetName(), op.GetStartTime(), op.GetEndTime())
	}
	wantTarget := "https://container.googleapis.com/v1/" + clusterPath(region, "alpha")
	if op.GetTargetLink() != wantTarget || op.GetSelfLink() != "https://container.googleapis.com/v1/"+parent(region)+"/operations/"+op.GetName() {
		t.Errorf("targetLink %q selfLink %q", op.GetTargetLink(), op.GetSelfLink())
	}

	c := e.get(t, region, "alpha")
	if c.GetStatus() != containerpb.Cluster_PROVISIONING || len(c.GetNodePools()) != 1 || c.GetNodePools()[0].GetStatus() != containerpb.NodePool_PROVISIONING {
		t.Fatalf("while creating: cluster %v, pools %v", c.GetStatus(), c.GetNodePools())
	}
	if got := e.getOp(t, region, op).GetStatus(); got != containerpb.Operation_RUNNING {
		t.Fatalf("operation %v, want RUNNING", got)
	}
	e.clk.Advance(9 * time.Minute)
	if got := e.getOp(t, region, op).GetStatus(); got != containerpb.Operation_RUNNING {
		t.Fatalf("operation %v before CreateDelay, want RUNNING", got)
	}
	done := e.wait(t, region, op, time.Minute)
	if done.GetEndTime() == "" || done.GetError() != nil {
		t.Errorf("done operation end %q error %v", done.GetEndTime(), done.GetError())
	}

	c = e.get(t, region, "alpha")
	if c.GetStatus() != containerpb.Cluster_RUNNING {
		t.Fatalf("status %v, want RUNNING", c.GetStatus())
	}
	ca, err := base64.StdEncoding.DecodeString(c.GetMasterAuth().GetClusterCaCertificate())
	if err != nil || !bytes.Equal(ca, e.srv.CACertPEM()) {
		t.Errorf("clusterCaCertificate is not the server CA (err %v)", err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"currentMasterVersion", c.GetCurrentMasterVersion(), gketest.DefaultVersion},
		{"currentNodeVersion", c.GetCurrentNodeVersion(), gketest.DefaultVersion},
		{"location", c.GetLocation(), region},
		{"zone", c.GetZone(), region},
		{"selfLink", c.GetSelfLink(), wantTarget},
		{"locations", strings.Join(c.GetLocations(), ","), "us-central1-a,us-central1-b,us-central1-c"},
		{"endpoint is 34.x", strings.HasPrefix(c.GetEndpoint(), "34."), true},
		{"labelFingerprint", c.GetLabelFingerprint(), fingerprint(map[string]string{"team": "a", "env": "dev"})},
		{"loggingService", c.GetLoggingService(), "logging.googleapis.com/kubernetes"},
		{"monitoringService", c.GetMonitoringService(), "monitoring.googleapis.com/kubernetes"},
		{"network", c.GetNetwork(), "default"},
		{"clusterIpv4Cidr", c.GetClusterIpv4Cidr(), "10.4.0.0/14"},
		{"servicesIpv4Cidr", c.GetServicesIpv4Cidr(), "10.8.0.0/20"},
		{"useIpAliases", c.GetIpAllocationPolicy().GetUseIpAliases(), true},
		{"networkPolicyConfig disabled", c.GetAddonsConfig().GetNetworkPolicyConfig().GetDisabled(), true},
		{"httpLoadBalancing set", c.GetAddonsConfig().GetHttpLoadBalancing() != nil, true},
		{"etag set", c.GetEtag() != "", true},
		{"createTime", c.GetCreateTime(), "2026-01-02T03:04:05Z"},
		{"pool version", c.GetNodePools()[0].GetVersion(), gketest.DefaultVersion},
		{"pool status", c.GetNodePools()[0].GetStatus(), containerpb.NodePool_RUNNING},
		{"pool size", c.GetNodePools()[0].GetInitialNodeCount(), int32(2)},
		{"pool machineType", c.GetNodePools()[0].GetConfig().GetMachineType(), "e2-medium"},
		{"pool diskSizeGb", c.GetNodePools()[0].GetConfig().GetDiskSizeGb(), int32(100)},
		{"pool imageType", c.GetNodePools()[0].GetConfig().GetImageType(), "COS_CONTAINERD"},
		{"pool management", c.GetNodePools()[0].GetManagement().GetAutoUpgrade() && c.GetNodePools()[0].GetManagement().GetAutoRepair(), true},
		{"pool maxPods", c.GetNodePools()[0].GetMaxPodsConstraint().GetMaxPodsPerNode(), int64(110)},
		{"pool locations", len(c.GetNodePools()[0].GetLocations()), 3},
		{"pool selfLink", c.GetNodePools()[0].GetSelfLink(), "https://container.googleapis.com/v1/" + poolPath(region, "alpha", "pool-1")},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.what, ch.got, ch.want)
		}
	}

	// Listing: by location and across locations.
	e.srv.FailOperations(0, "")
	if err := e.srv.ImportCluster(project, zone, standardCluster("beta")); err != nil {
		t.Fatal(err)
	}
	for loc, want := range map[string]int{region: 1, zone: 1, "-": 2, "asia-east1": 0} {
		list, err := e.cm.ListClusters(e.ctx, &containerpb.ListClustersRequest{Parent: parent(loc)})
		if err != nil || len(list.GetClusters()) != want {
			t.Errorf("ListClusters(%s) = %d clusters, %v; want %d", loc, len(list.GetClusters()), err, want)
		}
	}
	ops, err := e.cm.ListOperations(e.ctx, &containerpb.ListOperationsRequest{Parent: parent("-")})
	if err != nil || len(ops.GetOperations()) != 1 || ops.GetOperations()[0].GetName() != op.GetName() {
		t.Errorf("ListOperations = %v, %v", ops.GetOperations(), err)
	}

	// Deletion: STOPPING, then gone.
	del, err := e.cm.DeleteCluster(e.ctx, &containerpb.DeleteClusterRequest{Name: clusterPath(region, "alpha")})
	if err != nil || del.GetOperationType() != containerpb.Operation_DELETE_CLUSTER {
		t.Fatalf("DeleteCluster = %v, %v", del, err)
	}
	if got := e.get(t, region, "alpha").GetStatus(); got != containerpb.Cluster_STOPPING {
		t.Errorf("deleting cluster is %v, want STOPPING", got)
	}
	e.wait(t, region, del, 5*time.Minute)
	_, err = e.cm.GetCluster(e.ctx, &containerpb.GetClusterRequest{Name: clusterPath(region, "alpha")})
	wantAPIError(t, err, 404, "notFound", "Not found: "+clusterPath(region, "alpha")+".")
	_, err = e.cm.DeleteCluster(e.ctx, &containerpb.DeleteClusterRequest{Name: clusterPath(region, "alpha")})
	wantAPIError(t, err, 404, "notFound", "")
	if _, ok := e.srv.Operation(project, region, del.GetName()); !ok {
		t.Error("the delete operation is gone with its cluster")
	}
}

func TestVersionsAndDefaults(t *testing.T) {
	for in, want := range map[string]string{
		"": gketest.DefaultVersion, "latest": gketest.DefaultVersion, "-": gketest.DefaultVersion,
		gketest.DefaultKubernetesVersion: gketest.DefaultVersion,
		"1.30":                           "1.30.5-gke.1000000", "1.30.2": "1.30.2-gke.1000000", "1.30.2-gke.1200": "1.30.2-gke.1200",
	} {
		if got, ok := gketest.ResolveVersion(in); !ok || got != want {
			t.Errorf("ResolveVersion(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := gketest.ResolveVersion("1.x"); ok {
		t.Error(`ResolveVersion("1.x") is ok`)
	}

	e := setup(t, gketest.Options{
		EndpointFor:             func(name string) string { return "203.0.113.7" },
		CertificateAuthorityFor: func(name string) []byte { return []byte("CA of " + name) },
	})
	for i, v := range []string{"1.30", "1.30.2", "1.30.2-gke.1200", "latest"} {
		name := "v" + string(rune('a'+i))
		spec := standardCluster(name)
		spec.InitialClusterVersion = v
		e.create(t, zone, spec)
		c := e.get(t, zone, name)
		want, _ := gketest.ResolveVersion(v)
		if c.GetCurrentMasterVersion() != want || c.GetNodePools()[0].GetVersion() != want {
			t.Errorf("version %q: master %q pool %q, want %q", v, c.GetCurrentMasterVersion(), c.GetNodePools()[0].GetVersion(), want)
		}
		if c.GetStatus() != containerpb.Cluster_RUNNING {
			t.Errorf("with zero delay the cluster is %v at the next request", c.GetStatus())
		}
	}
	c := e.get(t, zone, "va")
	if c.GetEndpoint() != "203.0.113.7" || c.GetMasterAuth().GetClusterCaCertificate() != base64.StdEncoding.EncodeToString([]byte("CA of va")) {
		t.Errorf("endpoint %q ca %q from Options", c.GetEndpoint(), c.GetMasterAuth().GetClusterCaCertificate())
	}
	if strings.Join(c.GetLocations(), ",") != zone {
		t.Errorf("zonal cluster locations %v", c.GetLocations())
	}

	// initialNodeCount makes default-pool; autopilot needs no pool.
	e.create(t, zone, &containerpb.Cluster{Name: "legacy", InitialNodeCount: 1})
	if ps := e.get(t, zone, "legacy").GetNodePools(); len(ps) != 1 || ps[0].GetName() != gketest.DefaultPoolName || ps[0].GetInitialNodeCount() != 1 {
		t.Errorf("legacy pools %v", ps)
	}
	e.create(t, zone, &containerpb.Cluster{Name: "auto", Autopilot: &containerpb.Autopilot{Enabled: true}})
	if c := e.get(t, zone, "auto"); len(c.GetNodePools()) != 0 || c.GetStatus() != containerpb.Cluster_RUNNING {
		t.Errorf("autopilot cluster %v pools %v", c.GetStatus(), c.GetNodePools())
	}
	_, err := e.cm.CreateNodePool(e.ctx, &containerpb.CreateNodePoolRequest{Parent: clusterPath(zone, "auto"), NodePool: &containerpb.NodePool{Name: "p"}})
	wantAPIError(t, err, 400, "badRequest", "")
}

func TestErrors(t *testing.T) {
	e := setup(t, gketest.Options{UpdateDelay: time.Minute})
	e.create(t, region, standardCluster("alpha"))
	c := e.get(t, region, "alpha")

	var busyOp *containerpb.Operation
	cases := []struct {
		name    string
		call    func() error
		code    int
		reason  string
		message string
	}{
		{"name taken", func() error {
			_, err := e.cm.CreateCluster(e.ctx, &containerpb.CreateClusterRequest{Parent: parent(region), Cluster: standardCluster("alpha")})
			return err
		}, 409, "alreadyExists", "Already exists: " + clusterPath(region, "alpha") + "."},
		{"invalid name", func() error {
			_, err := e.cm.CreateCluster(e.ctx, &containerpb.CreateClusterRequest{Parent: parent(region), Cluster: standardCluster("Bad_Name")})
			return err
		}, 400, "badRequest", ""},
		{"invalid location", func() error {
			_, err := e.cm.CreateCluster(e.ctx, &containerpb.CreateClusterRequest{Parent: parent("moon"), Cluster: standardCluster("gamma")})
			return err
		}, 400, "badRequest", ""},
		{"zone of another region", func() error {
			spec := standardCluster("gamma")
			spec.Locations = []string{"us-east1-b"}
			_, err := e.cm.CreateCluster(e.ctx, &containerpb.CreateClusterRequest{Parent: parent(region), Cluster: spec})
			return err
		}, 400, "badRequest", ""},
		{"pool version newer than master", func() error {
			spec := standardCluster("gamma")
			spec.InitialClusterVersion = "1.30"
			spec.NodePools[0].Version = "1.31"
			_, err := e.cm.CreateCluster(e.ctx, &containerpb.CreateClusterRequest{Parent: parent(region), Cluster: spec})
			return err
		}, 400, "badRequest", ""},
		{"no node pool", func() error {
			_, err := e.cm.CreateCluster(e.ctx, &containerpb.CreateClusterRequest{Parent: parent(region), Cluster: &containerpb.Cluster{Name: "empty"}})
			return err
		}, 400, "badRequest", ""},
		{"no update", func() error {
			_, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{}})
			return err
		}, 400, "badRequest", "Exactly one update can be applied to a cluster with each request."},
		{"two updates", func() error {
			_, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{
				DesiredLoggingService: "none", DesiredMonitoringService: "none",
			}})
			return err
		}, 400, "badRequest", "Exactly one update can be applied to a cluster with each request."},
		{"unsupported update", func() error {
			_, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{
				DesiredDatapathProvider: containerpb.DatapathProvider_ADVANCED_DATAPATH,
			}})
			return err
		}, 400, "badRequest", "Update of desiredDatapathProvider is not supported by the GKE emulator."},
		{"master downgrade", func() error {
			_, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{DesiredMasterVersion: "1.30"}})
			return err
		}, 400, "badRequest", "Master cannot be downgraded from " + gketest.DefaultVersion + " to 1.30.5-gke.1000000."},
		{"master two minors up", func() error {
			_, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{DesiredMasterVersion: "1.33"}})
			return err
		}, 400, "badRequest", ""},
		{"pool newer than master", func() error {
			_, err := e.cm.UpdateNodePool(e.ctx, &containerpb.UpdateNodePoolRequest{Name: poolPath(region, "alpha", "pool-1"), NodeVersion: "1.32"})
			return err
		}, 400, "badRequest", ""},
		{"cluster etag mismatch", func() error {
			_, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{
				DesiredLoggingService: "none", Etag: "stale",
			}})
			return err
		}, 409, "aborted", "Cluster etag mismatch."},
		{"pool etag mismatch", func() error {
			_, err := e.cm.UpdateNodePool(e.ctx, &containerpb.UpdateNodePoolRequest{Name: poolPath(region, "alpha", "pool-1"), ImageType: "UBUNTU_CONTAINERD", Etag: "stale"})
			return err
		}, 409, "aborted", ""},
		{"fingerprint mismatch", func() error {
			_, err := e.cm.SetLabels(e.ctx, &containerpb.SetLabelsRequest{Name: clusterPath(region, "alpha"), ResourceLabels: map[string]string{"a": "b"}, LabelFingerprint: "0000"})
			return err
		}, 400, "failedPrecondition", `Labels could not be set due to fingerprint mismatch; try again with the proper fingerprint: incorrect fingerprint supplied was "0000", the expected one is "` + c.GetLabelFingerprint() + `".`},
		{"autoscaling min > max", func() error {
			_, err := e.cm.SetNodePoolAutoscaling(e.ctx, &containerpb.SetNodePoolAutoscalingRequest{Name: poolPath(region, "alpha", "pool-1"),
				Autoscaling: &containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: 5, MaxNodeCount: 2}})
			return err
		}, 400, "badRequest", ""},
		{"missing pool", func() error {
			_, err := e.cm.DeleteNodePool(e.ctx, &containerpb.DeleteNodePoolRequest{Name: poolPath(region, "alpha", "nope")})
			return err
		}, 404, "notFound", "Not found: " + poolPath(region, "alpha", "nope") + "."},
		{"missing operation", func() error {
			_, err := e.cm.GetOperation(e.ctx, &containerpb.GetOperationRequest{Name: parent(region) + "/operations/operation-1-deadbeef"})
			return err
		}, 404, "notFound", ""},
		{"start an update", func() error {
			var err error
			busyOp, err = e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{
				DesiredLoggingService: "none", Etag: c.GetEtag(),
			}})
			return err
		}, 0, "", ""},
		{"busy: update", func() error {
			_, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{DesiredMonitoringService: "none"}})
			return err
		}, 400, "failedPrecondition", "busy"},
		{"busy: pool size", func() error {
			_, err := e.cm.SetNodePoolSize(e.ctx, &containerpb.SetNodePoolSizeRequest{Name: poolPath(region, "alpha", "pool-1"), NodeCount: 1})
			return err
		}, 400, "failedPrecondition", "busy"},
		{"busy: delete", func() error {
			_, err := e.cm.DeleteCluster(e.ctx, &containerpb.DeleteClusterRequest{Name: clusterPath(region, "alpha")})
			return err
		}, 400, "failedPrecondition", "busy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if tc.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			msg := tc.message
			if msg == "busy" {
				msg = "Cluster is running incompatible operation " + busyOp.GetName() + "."
			}
			wantAPIError(t, err, tc.code, tc.reason, msg)
		})
	}

	// Meanwhile the cluster is RECONCILING with the old value.
	if c := e.get(t, region, "alpha"); c.GetStatus() != containerpb.Cluster_RECONCILING || c.GetLoggingService() != "logging.googleapis.com/kubernetes" {
		t.Errorf("updating: %v %q", c.GetStatus(), c.GetLoggingService())
	}
	e.wait(t, region, busyOp, time.Minute)
	if c2 := e.get(t, region, "alpha"); c2.GetStatus() != containerpb.Cluster_RUNNING || c2.GetLoggingService() != "none" || c2.GetEtag() == c.GetEtag() {
		t.Errorf("updated: %v %q etag %q (was %q)", c2.GetStatus(), c2.GetLoggingService(), c2.GetEtag(), c.GetEtag())
	}
}

func TestLabelsAndClusterUpdates(t *testing.T) {
	e := setup(t, gketest.Options{})
	e.create(t, region, standardCluster("alpha"))
	c := e.get(t, region, "alpha")

	op, err := e.cm.SetLabels(e.ctx, &containerpb.SetLabelsRequest{Name: clusterPath(region, "alpha"), ResourceLabels: map[string]string{"team": "b"}, LabelFingerprint: c.GetLabelFingerprint()})
	if err != nil || op.GetOperationType() != containerpb.Operation_SET_LABELS {
		t.Fatalf("SetLabels = %v, %v", op, err)
	}
	c = e.get(t, region, "alpha")
	if len(c.GetResourceLabels()) != 1 || c.GetResourceLabels()["team"] != "b" || c.GetLabelFingerprint() != fingerprint(map[string]string{"team": "b"}) {
		t.Errorf("labels %v fingerprint %q", c.GetResourceLabels(), c.GetLabelFingerprint())
	}

	update := func(u *containerpb.ClusterUpdate) *containerpb.Operation {
		t.Helper()
		op, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: u})
		if err != nil {
			t.Fatalf("UpdateCluster %v: %v", u, err)
		}
		return op
	}
	if op := update(&containerpb.ClusterUpdate{DesiredMasterVersion: "1.32"}); op.GetOperationType() != containerpb.Operation_UPGRADE_MASTER {
		t.Errorf("master upgrade is %v", op.GetOperationType())
	}
	update(&containerpb.ClusterUpdate{DesiredAddonsConfig: &containerpb.AddonsConfig{HttpLoadBalancing: &containerpb.HttpLoadBalancing{Disabled: true}}})
	update(&containerpb.ClusterUpdate{DesiredNodePoolAutoscaling: &containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: 1, MaxNodeCount: 4}})
	if op := update(&containerpb.ClusterUpdate{DesiredNodeVersion: "-", DesiredNodePoolId: "pool-1"}); op.GetOperationType() != containerpb.Operation_UPGRADE_NODES {
		t.Errorf("node upgrade is %v", op.GetOperationType())
	}
	update(&containerpb.ClusterUpdate{DesiredLocations: []string{"us-central1-a", "us-central1-f"}})
	_, err = e.cm.SetNetworkPolicy(e.ctx, &containerpb.SetNetworkPolicyRequest{Name: clusterPath(region, "alpha"), NetworkPolicy: &containerpb.NetworkPolicy{Provider: containerpb.NetworkPolicy_CALICO, Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	c = e.get(t, region, "alpha")
	p := c.GetNodePools()[0]
	if c.GetCurrentMasterVersion() != "1.32.5-gke.1000000" || p.GetVersion() != "1.32.5-gke.1000000" {
		t.Errorf("versions: master %q pool %q", c.GetCurrentMasterVersion(), p.GetVersion())
	}
	if !c.GetAddonsConfig().GetHttpLoadBalancing().GetDisabled() || !c.GetAddonsConfig().GetNetworkPolicyConfig().GetDisabled() || c.GetAddonsConfig().GetHorizontalPodAutoscaling() == nil {
		t.Errorf("addons not merged: %v", c.GetAddonsConfig())
	}
	if !p.GetAutoscaling().GetEnabled() || p.GetAutoscaling().GetMaxNodeCount() != 4 {
		t.Errorf("autoscaling %v", p.GetAutoscaling())
	}
	if strings.Join(c.GetLocations(), ",") != "us-central1-a,us-central1-f" || len(p.GetLocations()) != 2 {
		t.Errorf("locations %v, pool %v", c.GetLocations(), p.GetLocations())
	}
	if np := c.GetNetworkPolicy(); np.GetProvider() != containerpb.NetworkPolicy_CALICO || !np.GetEnabled() {
		t.Errorf("network policy %v", np)
	}
}

func TestPools(t *testing.T) {
	e := setup(t, gketest.Options{CreateDelay: time.Minute, UpdateDelay: time.Minute, DeleteDelay: time.Minute})
	spec := standardCluster("alpha")
	spec.InitialClusterVersion = "1.30"
	e.wait(t, region, e.create(t, region, spec), time.Minute)

	op, err := e.cm.CreateNodePool(e.ctx, &containerpb.CreateNodePoolRequest{Parent: clusterPath(region, "alpha"), NodePool: &containerpb.NodePool{
		Name:   "pool-2",
		Config: &containerpb.NodeConfig{MachineType: "n2-standard-4"},
	}})
	if err != nil || op.GetOperationType() != containerpb.Operation_CREATE_NODE_POOL {
		t.Fatalf("CreateNodePool = %v, %v", op, err)
	}
	_, err = e.cm.CreateNodePool(e.ctx, &containerpb.CreateNodePoolRequest{Parent: clusterPath(region, "alpha"), NodePool: &containerpb.NodePool{Name: "pool-2"}})
	wantAPIError(t, err, 409, "alreadyExists", "")
	np, err := e.cm.GetNodePool(e.ctx, &containerpb.GetNodePoolRequest{Name: poolPath(region, "alpha", "pool-2")})
	if err != nil || np.GetStatus() != containerpb.NodePool_PROVISIONING || np.GetInitialNodeCount() != 3 || np.GetConfig().GetMachineType() != "n2-standard-4" {
		t.Fatalf("new pool %v, %v", np, err)
	}
	e.wait(t, region, op, time.Minute)

	// Upgrade the master, then the pool; labels, taints and tags.
	upg, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{DesiredMasterVersion: "1.31"}})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, region, upg, time.Minute)
	if v := e.get(t, region, "alpha").GetNodePools()[1].GetVersion(); v != "1.30.5-gke.1000000" {
		t.Errorf("a master upgrade moved the pool to %q", v)
	}
	np, _ = e.cm.GetNodePool(e.ctx, &containerpb.GetNodePoolRequest{Name: poolPath(region, "alpha", "pool-2")})
	op, err = e.cm.UpdateNodePool(e.ctx, &containerpb.UpdateNodePoolRequest{
		Name: poolPath(region, "alpha", "pool-2"), NodeVersion: "1.31", ImageType: "UBUNTU_CONTAINERD", Etag: np.GetEtag(),
		Labels: &containerpb.NodeLabels{Labels: map[string]string{"role": "db"}},
		Taints: &containerpb.NodeTaints{Taints: []*containerpb.NodeTaint{{Key: "k", Value: "v", Effect: containerpb.NodeTaint_NO_SCHEDULE}}},
		Tags:   &containerpb.NetworkTags{Tags: []string{"web"}},
	})
	if err != nil || op.GetOperationType() != containerpb.Operation_UPGRADE_NODES {
		t.Fatalf("UpdateNodePool = %v, %v", op, err)
	}
	np, _ = e.cm.GetNodePool(e.ctx, &containerpb.GetNodePoolRequest{Name: poolPath(region, "alpha", "pool-2")})
	if np.GetStatus() != containerpb.NodePool_RECONCILING || np.GetVersion() != "1.30.5-gke.1000000" {
		t.Errorf("upgrading pool %v %q", np.GetStatus(), np.GetVersion())
	}
	if c := e.get(t, region, "alpha"); c.GetStatus() != containerpb.Cluster_RUNNING {
		t.Errorf("cluster %v during a pool update, want RUNNING", c.GetStatus())
	}
	e.wait(t, region, op, time.Minute)
	np, _ = e.cm.GetNodePool(e.ctx, &containerpb.GetNodePoolRequest{Name: poolPath(region, "alpha", "pool-2")})
	cfg := np.GetConfig()
	if np.GetStatus() != containerpb.NodePool_RUNNING || np.GetVersion() != gketest.DefaultVersion || cfg.GetImageType() != "UBUNTU_CONTAINERD" ||
		cfg.GetLabels()["role"] != "db" || len(cfg.GetTaints()) != 1 || cfg.GetTaints()[0].GetEffect() != containerpb.NodeTaint_NO_SCHEDULE ||
		strings.Join(cfg.GetTags(), ",") != "web" {
		t.Errorf("updated pool %v", np)
	}
	_, err = e.cm.UpdateNodePool(e.ctx, &containerpb.UpdateNodePoolRequest{Name: poolPath(region, "alpha", "pool-2"), NodeVersion: "1.30"})
	wantAPIError(t, err, 400, "badRequest", "")

	// setSize 0: nodeCount is left out of the JSON.
	op, err = e.cm.SetNodePoolSize(e.ctx, &containerpb.SetNodePoolSizeRequest{Name: poolPath(region, "alpha", "pool-2"), NodeCount: 0})
	if err != nil || op.GetOperationType() != containerpb.Operation_SET_NODE_POOL_SIZE {
		t.Fatalf("SetNodePoolSize = %v, %v", op, err)
	}
	e.wait(t, region, op, time.Minute)
	if p, _ := e.srv.NodePool(project, region, "alpha", "pool-2"); p.GetInitialNodeCount() != 0 {
		t.Errorf("size %d after setSize 0", p.GetInitialNodeCount())
	}

	op, err = e.cm.SetNodePoolManagement(e.ctx, &containerpb.SetNodePoolManagementRequest{Name: poolPath(region, "alpha", "pool-2"), Management: &containerpb.NodeManagement{AutoRepair: true}})
	if err != nil || op.GetOperationType() != containerpb.Operation_SET_NODE_POOL_MANAGEMENT {
		t.Fatalf("SetNodePoolManagement = %v, %v", op, err)
	}
	e.wait(t, region, op, time.Minute)
	op, err = e.cm.SetNodePoolAutoscaling(e.ctx, &containerpb.SetNodePoolAutoscalingRequest{Name: poolPath(region, "alpha", "pool-2"), Autoscaling: &containerpb.NodePoolAutoscaling{Enabled: true, MaxNodeCount: 5}})
	if err != nil || op.GetOperationType() != containerpb.Operation_UPDATE_CLUSTER {
		t.Fatalf("SetNodePoolAutoscaling = %v, %v", op, err)
	}
	e.wait(t, region, op, time.Minute)
	p, _ := e.srv.NodePool(project, region, "alpha", "pool-2")
	if p.GetManagement().GetAutoUpgrade() || !p.GetManagement().GetAutoRepair() || p.GetAutoscaling().GetMaxNodeCount() != 5 {
		t.Errorf("management %v autoscaling %v", p.GetManagement(), p.GetAutoscaling())
	}

	op, err = e.cm.DeleteNodePool(e.ctx, &containerpb.DeleteNodePoolRequest{Name: poolPath(region, "alpha", "pool-2")})
	if err != nil || op.GetOperationType() != containerpb.Operation_DELETE_NODE_POOL {
		t.Fatalf("DeleteNodePool = %v, %v", op, err)
	}
	list, _ := e.cm.ListNodePools(e.ctx, &containerpb.ListNodePoolsRequest{Parent: clusterPath(region, "alpha")})
	if len(list.GetNodePools()) != 2 || list.GetNodePools()[1].GetStatus() != containerpb.NodePool_STOPPING {
		t.Errorf("while deleting: %v", list.GetNodePools())
	}
	e.wait(t, region, op, time.Minute)
	list, _ = e.cm.ListNodePools(e.ctx, &containerpb.ListNodePoolsRequest{Parent: clusterPath(region, "alpha")})
	if len(list.GetNodePools()) != 1 || list.GetNodePools()[0].GetName() != "pool-1" {
		t.Errorf("after delete: %v", list.GetNodePools())
	}
}

func TestFailOperations(t *testing.T) {
	e := setup(t, gketest.Options{})
	e.create(t, region, standardCluster("alpha"))
	before := e.get(t, region, "alpha")

	e.srv.FailOperations(1, "upgrade broke")
	op, err := e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "alpha"), Update: &containerpb.ClusterUpdate{DesiredMasterVersion: "1.32"}})
	if err != nil {
		t.Fatal(err)
	}
	done := e.wait(t, region, op, 0)
	if done.GetError().GetCode() != 13 || done.GetError().GetMessage() != "upgrade broke" || done.GetStatusMessage() != "upgrade broke" {
		t.Errorf("failed operation error %v statusMessage %q", done.GetError(), done.GetStatusMessage())
	}
	after := e.get(t, region, "alpha")
	if after.GetCurrentMasterVersion() != before.GetCurrentMasterVersion() || after.GetStatus() != containerpb.Cluster_RUNNING || after.GetEtag() != before.GetEtag() {
		t.Errorf("after a failed upgrade: %q %v etag changed %v", after.GetCurrentMasterVersion(), after.GetStatus(), after.GetEtag() != before.GetEtag())
	}

	// The next operation succeeds again.
	op, err = e.cm.SetNodePoolSize(e.ctx, &containerpb.SetNodePoolSizeRequest{Name: poolPath(region, "alpha", "pool-1"), NodeCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	if done := e.wait(t, region, op, 0); done.GetError() != nil {
		t.Errorf("operation after the injected failure failed: %v", done.GetError())
	}

	// A failed create leaves the cluster in ERROR.
	e.srv.FailOperations(1, "no capacity")
	e.create(t, region, standardCluster("beta"))
	c := e.get(t, region, "beta")
	if c.GetStatus() != containerpb.Cluster_ERROR || c.GetStatusMessage() != "no capacity" || c.GetNodePools()[0].GetStatus() != containerpb.NodePool_ERROR {
		t.Errorf("failed create: %v %q pool %v", c.GetStatus(), c.GetStatusMessage(), c.GetNodePools()[0].GetStatus())
	}
}

func TestFailNextAndCalls(t *testing.T) {
	e := setup(t, gketest.Options{})
	e.srv.FailNext(gketest.MethodClustersCreate, http.StatusServiceUnavailable, "", "try later", 1)
	_, err := e.cm.CreateCluster(e.ctx, &containerpb.CreateClusterRequest{Parent: parent(region), Cluster: standardCluster("alpha")})
	wantAPIError(t, err, 503, "backendError", "try later")
	if _, ok := e.srv.Cluster(project, region, "alpha"); ok {
		t.Error("an injected failure created the cluster")
	}
	e.create(t, region, standardCluster("alpha"))

	// GETs are retried by the client on 503: two calls, one answer.
	e.srv.ResetCalls()
	e.srv.FailNext(gketest.MethodClustersGet, http.StatusServiceUnavailable, "", "", 1)
	e.get(t, region, "alpha")
	if n := e.srv.Calls()[gketest.MethodClustersGet]; n != 2 {
		t.Errorf("clusters.get calls = %d, want 2", n)
	}

	e.srv.FailNext(gketest.MethodNodePoolsSetSize, http.StatusForbidden, "", "", 2)
	for range 2 {
		_, err = e.cm.SetNodePoolSize(e.ctx, &containerpb.SetNodePoolSizeRequest{Name: poolPath(region, "alpha", "pool-1"), NodeCount: 1})
		wantAPIError(t, err, 403, "forbidden", "")
	}
	if _, err = e.cm.SetNodePoolSize(e.ctx, &containerpb.SetNodePoolSizeRequest{Name: poolPath(region, "alpha", "pool-1"), NodeCount: 1}); err != nil {
		t.Fatal(err)
	}
	if n := e.srv.Calls()[gketest.MethodNodePoolsSetSize]; n != 3 {
		t.Errorf("nodePools.setSize calls = %d, want 3", n)
	}
}

func TestImportAndPrivateCluster(t *testing.T) {
	e := setup(t, gketest.Options{CreateDelay: time.Hour})
	spec := standardCluster("private")
	spec.PrivateClusterConfig = &containerpb.PrivateClusterConfig{EnablePrivateNodes: true, EnablePrivateEndpoint: true, MasterIpv4CidrBlock: "172.16.0.0/28"}
	if err := e.srv.ImportCluster(project, region, spec); err != nil {
		t.Fatal(err)
	}
	if spec.GetEndpoint() != "" {
		t.Error("ImportCluster changed its argument")
	}
	c := e.get(t, region, "private")
	pc := c.GetPrivateClusterConfig()
	if c.GetStatus() != containerpb.Cluster_RUNNING || c.GetNodePools()[0].GetStatus() != containerpb.NodePool_RUNNING {
		t.Errorf("imported cluster %v, pool %v", c.GetStatus(), c.GetNodePools()[0].GetStatus())
	}
	if c.GetEndpoint() != gketest.PrivateEndpoint || pc.GetPrivateEndpoint() != gketest.PrivateEndpoint || !strings.HasPrefix(pc.GetPublicEndpoint(), "34.") {
		t.Errorf("endpoint %q private %q public %q", c.GetEndpoint(), pc.GetPrivateEndpoint(), pc.GetPublicEndpoint())
	}

	spec = standardCluster("nodes-only")
	spec.PrivateClusterConfig = &containerpb.PrivateClusterConfig{EnablePrivateNodes: true}
	if err := e.srv.ImportCluster(project, region, spec); err != nil {
		t.Fatal(err)
	}
	c, _ = e.srv.Cluster(project, region, "nodes-only")
	if c.GetEndpoint() != c.GetPrivateClusterConfig().GetPublicEndpoint() || c.GetPrivateClusterConfig().GetPrivateEndpoint() != gketest.PrivateEndpoint {
		t.Errorf("private nodes: endpoint %q config %v", c.GetEndpoint(), c.GetPrivateClusterConfig())
	}

	err := e.srv.ImportCluster(project, region, standardCluster("private"))
	var ae *gketest.APIError
	if !errors.As(err, &ae) || ae.Code != 409 || ae.Reason != "alreadyExists" {
		t.Errorf("second import: %v", err)
	}
	_, err = e.cm.UpdateCluster(e.ctx, &containerpb.UpdateClusterRequest{Name: clusterPath(region, "private"), Update: &containerpb.ClusterUpdate{
		DesiredPrivateClusterConfig: &containerpb.PrivateClusterConfig{EnablePrivateEndpoint: false},
	}})
	wantAPIError(t, err, 400, "badRequest", "")
}

func TestRawHTTP(t *testing.T) {
	e := setup(t, gketest.Options{})
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("GET", "/v1/projects/p/zones/z/clusters", ""); code != 404 || !strings.Contains(body, `"NOT_FOUND"`) {
		t.Errorf("unknown path: %d %s", code, body)
	}
	if code, body := do("POST", "/v1/"+parent(region)+"/clusters", "{not json"); code != 400 || !strings.Contains(body, `"badRequest"`) {
		t.Errorf("bad JSON: %d %s", code, body)
	}
	// Enum numbers and names both decode.
	if code, body := do("POST", "/v1/"+parent(region)+"/clusters", `{"cluster":{"name":"raw","initialNodeCount":1,"networkPolicy":{"provider":1}}}`); code != 200 || !strings.Contains(body, `"CREATE_CLUSTER"`) {
		t.Errorf("create by raw JSON: %d %s", code, body)
	}
	if c, ok := e.srv.Cluster(project, region, "raw"); !ok || c.GetNetworkPolicy().GetProvider() != containerpb.NetworkPolicy_CALICO {
		t.Errorf("raw cluster %v", c.GetNetworkPolicy())
	}
	if n := e.srv.Calls()[gketest.MethodUnknown]; n != 1 {
		t.Errorf("unknown calls = %d", n)
	}
}
