package crd

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

func ptr[T any](v T) *T { return &v }

// The embedded files decode into the six CRDs, with the scope and printer
// columns the API asks for. No server needed.
func TestCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		scope   string
		columns []string
	}{
		"eksclusterconfigs.eks.clustersync.io":                {"Namespaced", []string{"Region", "Phase", "Version", "Age"}},
		"aksclusterconfigs.aks.clustersync.io":                {"Namespaced", []string{"Location", "Phase", "Version", "Age"}},
		"gkeclusterconfigs.gke.clustersync.io":                {"Namespaced", []string{"Project", "Region", "Zone", "Phase", "Version", "Age"}},
		"clusters.management.clustersync.io":                  {"Cluster", []string{"Driver", "Phase", "Version", "Age"}},
		"projects.management.clustersync.io":                  {"Cluster", []string{"Cluster", "Display Name", "Namespaces", "Age"}},
		"clusterregistrationtokens.management.clustersync.io": {"Namespaced", []string{"Cluster", "Expires", "Age"}},
	}
	if len(crds) != len(want) {
		t.Fatalf("%d CRDs, want %d", len(crds), len(want))
	}
	for _, c := range crds {
		w, ok := want[c.Name]
		if !ok {
			t.Errorf("unexpected CRD %s", c.Name)
			continue
		}
		if string(c.Spec.Scope) != w.scope {
			t.Errorf("%s: scope %s, want %s", c.Name, c.Spec.Scope, w.scope)
		}
		var cols []string
		for _, col := range c.Spec.Versions[0].AdditionalPrinterColumns {
			cols = append(cols, col.Name)
		}
		if !reflect.DeepEqual(cols, w.columns) {
			t.Errorf("%s: printer columns %v, want %v", c.Name, cols, w.columns)
		}
		if c.Spec.Versions[0].Subresources == nil || c.Spec.Versions[0].Subresources.Status == nil {
			t.Errorf("%s: no status subresource", c.Name)
		}
	}
}

// validSpec is an eksConfig a user could create: two node groups, one with
// every size set and one with only a name and a desired size; tags and
// logging types managed but empty; everything else unmanaged (nil).
func validSpec() *eksv1.EKSClusterConfigSpec {
	return &eksv1.EKSClusterConfigSpec{
		DisplayName:            "prod",
		AmazonCredentialSecret: "clustersync-global-data:aws-creds",
		Region:                 "us-west-2",
		KubernetesVersion:      ptr("1.32"),
		Tags:                   ptr(map[string]string{}),
		LoggingTypes:           ptr([]string{}),
		PublicAccessSources:    ptr([]string{"203.0.113.0/24"}),
		IPFamily:               ptr("ipv4"),
		NodeGroups: ptr([]eksv1.NodeGroup{
			{
				NodegroupName: "ng-a",
				MinSize:       ptr(int64(1)), DesiredSize: ptr(int64(2)), MaxSize: ptr(int64(3)),
				DiskSize:       ptr(int64(20)),
				InstanceType:   ptr("t3.medium"),
				Labels:         ptr(map[string]string{"role": "worker"}),
				LaunchTemplate: &eksv1.LaunchTemplate{ID: ptr("lt-0123"), Version: ptr(int64(3))},
			},
			{NodegroupName: "ng-b", DesiredSize: ptr(int64(0))},
		}),
	}
}

func newCluster(name string, spec *eksv1.EKSClusterConfigSpec) *mgmtv1.Cluster {
	return &mgmtv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       mgmtv1.ClusterSpec{DisplayName: "Cluster " + name, EKSConfig: spec},
	}
}

// The CRDs on a real kube-apiserver: installed twice, then objects
// round-trip with nil (unmanaged) fields kept nil, invalid ones are refused
// with the field named, status goes through its subresource, and the
// printer columns are what `kubectl get` shows.
func TestOnAPIServer(t *testing.T) {
	bins := binaries.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: t.TempDir(), Name: "crdtest", ServiceCIDR: "10.96.0.0/16", Binaries: bins})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()

	for i := 1; i <= 2; i++ {
		start := time.Now()
		if err := Install(ctx, cp.Config); err != nil {
			t.Fatalf("install #%d: %v", i, err)
		}
		t.Logf("install #%d took %v", i, time.Since(start).Round(time.Millisecond))
	}

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, eksv1.AddToScheme, aksv1.AddToScheme, gkev1.AddToScheme, mgmtv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = 200, 400 // no client-side throttling between the steps
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("round trip keeps nil and empty apart", func(t *testing.T) {
		want := validSpec()
		if err := c.Create(ctx, newCluster("prod", want)); err != nil {
			t.Fatal(err)
		}
		got := &mgmtv1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "prod"}, got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Spec.EKSConfig, want) {
			g, _ := json.Marshal(got.Spec.EKSConfig)
			w, _ := json.Marshal(want)
			t.Errorf("eksConfig changed in the round trip:\n got %s\nwant %s", g, w)
		}
		e := got.Spec.EKSConfig
		if e.PublicAccess != nil || e.PrivateAccess != nil || e.Subnets != nil || e.SecretsEncryption != nil || e.ServiceRole != nil {
			t.Error("an unmanaged (nil) field came back non-nil")
		}
		if e.Tags == nil || len(*e.Tags) != 0 || e.LoggingTypes == nil || len(*e.LoggingTypes) != 0 {
			t.Errorf("managed empty tags / loggingTypes came back as %v / %v", e.Tags, e.LoggingTypes)
		}
		ngb := (*e.NodeGroups)[1]
		if ngb.MinSize != nil || ngb.MaxSize != nil || ngb.Labels != nil || ngb.LaunchTemplate != nil {
			t.Errorf("unset node group fields came back set: %+v", ngb)
		}
		if ngb.DesiredSize == nil || *ngb.DesiredSize != 0 {
			t.Errorf("desiredSize 0 came back as %v", ngb.DesiredSize)
		}
		if e.Imported {
			t.Error("imported defaulted to true")
		}
	})

	t.Run("invalid objects are refused naming the field", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			mutate func(*eksv1.EKSClusterConfigSpec)
			want   []string // substrings of the error
		}{
			{"minSize above maxSize", func(s *eksv1.EKSClusterConfigSpec) {
				g := &(*s.NodeGroups)[0]
				g.MinSize, g.DesiredSize, g.MaxSize = ptr(int64(5)), nil, ptr(int64(2))
			}, []string{"spec.eksConfig.nodeGroups[0].minSize", "minSize must not exceed maxSize"}},
			{"desiredSize above maxSize", func(s *eksv1.EKSClusterConfigSpec) {
				(*s.NodeGroups)[0].DesiredSize = ptr(int64(4))
			}, []string{"spec.eksConfig.nodeGroups[0].desiredSize", "desiredSize must not exceed maxSize"}},
			{"desiredSize below minSize", func(s *eksv1.EKSClusterConfigSpec) {
				(*s.NodeGroups)[0].DesiredSize = ptr(int64(0))
			}, []string{"spec.eksConfig.nodeGroups[0].desiredSize", "desiredSize must not be below minSize"}},
			{"negative size", func(s *eksv1.EKSClusterConfigSpec) {
				(*s.NodeGroups)[1].DesiredSize = ptr(int64(-1))
			}, []string{"spec.eksConfig.nodeGroups[1].desiredSize"}},
			{"zero disk", func(s *eksv1.EKSClusterConfigSpec) {
				(*s.NodeGroups)[0].DiskSize = ptr(int64(0))
			}, []string{"spec.eksConfig.nodeGroups[0].diskSize"}},
			{"bad ipFamily", func(s *eksv1.EKSClusterConfigSpec) { s.IPFamily = ptr("ipv5") },
				[]string{"spec.eksConfig.ipFamily", `supported values: "ipv4", "ipv6"`}},
			{"empty region", func(s *eksv1.EKSClusterConfigSpec) { s.Region = "" },
				[]string{"spec.eksConfig.region"}},
			{"empty displayName", func(s *eksv1.EKSClusterConfigSpec) { s.DisplayName = "" },
				[]string{"spec.eksConfig.displayName"}},
			{"credential without namespace", func(s *eksv1.EKSClusterConfigSpec) { s.AmazonCredentialSecret = "aws-creds" },
				[]string{"spec.eksConfig.amazonCredentialSecret"}},
			{"bad logging type", func(s *eksv1.EKSClusterConfigSpec) { s.LoggingTypes = ptr([]string{"api", "kubelet"}) },
				[]string{"spec.eksConfig.loggingTypes[1]"}},
			{"patch version", func(s *eksv1.EKSClusterConfigSpec) { s.KubernetesVersion = ptr("1.32.1") },
				[]string{"spec.eksConfig.kubernetesVersion"}},
			{"duplicate nodegroupName", func(s *eksv1.EKSClusterConfigSpec) {
				(*s.NodeGroups)[1].NodegroupName = "ng-a"
			}, []string{"spec.eksConfig.nodeGroups[1]", "Duplicate value", "ng-a"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := validSpec()
				tc.mutate(s)
				err := c.Create(ctx, newCluster("invalid", s))
				if err == nil {
					_ = c.Delete(ctx, newCluster("invalid", nil))
					t.Fatal("created, want refused")
				}
				t.Log(err)
				if !apierrors.IsInvalid(err) {
					t.Fatalf("error %v, want Invalid", err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error does not mention %q: %v", w, err)
					}
				}
			})
		}
	})

	t.Run("registered clusters", func(t *testing.T) {
		imported := func(name string, mutate func(*mgmtv1.ClusterSpec)) *mgmtv1.Cluster {
			cl := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name,
				ImportedConfig: &mgmtv1.ImportedConfig{Members: []mgmtv1.ClusterMember{{Kind: "User", Name: "alice", Role: mgmtv1.RoleReadOnly}}},
				K3sConfig:      &mgmtv1.K3sConfig{KubernetesVersion: "v1.31.4+k3s1"}}}
			if mutate != nil {
				mutate(&cl.Spec)
			}
			return cl
		}
		ok := imported("edge", nil)
		if err := c.Create(ctx, ok); err != nil {
			t.Fatal(err)
		}
		if ok.Spec.K3sConfig.ServerConcurrency != 1 || ok.Spec.K3sConfig.WorkerConcurrency != 1 {
			t.Errorf("concurrency defaults %d/%d, want 1/1", ok.Spec.K3sConfig.ServerConcurrency, ok.Spec.K3sConfig.WorkerConcurrency)
		}
		for _, tc := range []struct {
			name   string
			mutate func(*mgmtv1.ClusterSpec)
			want   string
		}{
			{"both drivers", func(s *mgmtv1.ClusterSpec) { s.EKSConfig = validSpec() }, "exactly one of spec.eksConfig, spec.aksConfig, spec.gkeConfig and spec.importedConfig"},
			{"bad role", func(s *mgmtv1.ClusterSpec) { s.ImportedConfig.Members[0].Role = "admin" }, "spec.importedConfig.members[0].role"},
			{"bad k3s version", func(s *mgmtv1.ClusterSpec) { s.K3sConfig.KubernetesVersion = "1.31" }, "spec.k3sConfig.kubernetesVersion"},
			{"short token ttl", func(s *mgmtv1.ClusterSpec) { s.ImportedConfig.TokenTTLSeconds = ptr(int64(5)) }, "spec.importedConfig.tokenTTLSeconds"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := c.Create(ctx, imported("invalid-imported", tc.mutate))
				if err == nil {
					_ = c.Delete(ctx, imported("invalid-imported", nil))
					t.Fatal("created, want refused")
				}
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want Invalid naming %q", err, tc.want)
				}
			})
		}
		if err := c.Delete(ctx, ok); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("AKS clusters", func(t *testing.T) {
		aks := func(name string, mutate func(*aksv1.AKSClusterConfigSpec)) *mgmtv1.Cluster {
			spec := &aksv1.AKSClusterConfigSpec{ResourceGroup: "rg", ResourceLocation: "westeurope", ClusterName: name,
				AzureCredentialSecret: "clustersync-global-data:azure", KubernetesVersion: ptr("1.31"), DNSPrefix: ptr(name),
				Tags: ptr(map[string]string{}), NodePools: ptr([]aksv1.AKSNodePool{{Name: "system", Count: ptr(int32(1)), Mode: ptr("System")}})}
			if mutate != nil {
				mutate(spec)
			}
			return &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name, AKSConfig: spec}}
		}
		ok := aks("westeu", nil)
		if err := c.Create(ctx, ok); err != nil {
			t.Fatal(err)
		}
		if tags := ok.Spec.AKSConfig.Tags; tags == nil || len(*tags) != 0 || ok.Spec.AKSConfig.NetworkPlugin != nil {
			t.Errorf("managed empty tags / unmanaged networkPlugin came back as %v / %v", tags, ok.Spec.AKSConfig.NetworkPlugin)
		}
		ok.Status.Driver, ok.Status.Phase = mgmtv1.DriverAKS, mgmtv1.PhaseActive
		ok.Status.AKSStatus = &mgmtv1.AKSStatus{UpstreamSpec: ok.Spec.AKSConfig, AppliedSpec: &aksv1.AKSClusterConfigSpec{
			ResourceGroup: "rg", ResourceLocation: "westeurope", ClusterName: "westeu", AzureCredentialSecret: "clustersync-global-data:azure"}}
		if err := c.Status().Update(ctx, ok); err != nil {
			t.Fatalf("status with an applied spec of identity fields only: %v", err)
		}
		imported := aks("imported", func(s *aksv1.AKSClusterConfigSpec) {
			s.Imported, s.KubernetesVersion, s.DNSPrefix, s.Tags, s.NodePools = true, nil, nil, nil, nil
		})
		if err := c.Create(ctx, imported); err != nil {
			t.Fatalf("imported AKS cluster with every field unmanaged: %v", err)
		}
		for _, tc := range []struct {
			name   string
			mutate func(*mgmtv1.ClusterSpec)
			want   string
		}{
			{"two drivers", func(s *mgmtv1.ClusterSpec) { s.EKSConfig = validSpec() }, "exactly one of spec.eksConfig, spec.aksConfig, spec.gkeConfig and spec.importedConfig"},
			{"created without a version", func(s *mgmtv1.ClusterSpec) { s.AKSConfig.KubernetesVersion = nil }, "needs kubernetesVersion, dnsPrefix and at least one of nodePools"},
			{"created without pools", func(s *mgmtv1.ClusterSpec) { s.AKSConfig.NodePools = ptr([]aksv1.AKSNodePool{}) }, "at least one of nodePools"},
			{"bad pool name", func(s *mgmtv1.ClusterSpec) { (*s.AKSConfig.NodePools)[0].Name = "System_1" }, "spec.aksConfig.nodePools[0].name"},
			{"bad pool mode", func(s *mgmtv1.ClusterSpec) { (*s.AKSConfig.NodePools)[0].Mode = ptr("system") }, "spec.aksConfig.nodePools[0].mode"},
			{"bad credential reference", func(s *mgmtv1.ClusterSpec) { s.AKSConfig.AzureCredentialSecret = "azure" }, "spec.aksConfig.azureCredentialSecret"},
			{"no driver", func(s *mgmtv1.ClusterSpec) { s.AKSConfig = nil }, "exactly one of spec.eksConfig, spec.aksConfig, spec.gkeConfig and spec.importedConfig"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				bad := aks("invalid-aks", nil)
				tc.mutate(&bad.Spec)
				err := c.Create(ctx, bad)
				if err == nil {
					_ = c.Delete(ctx, bad)
					t.Fatal("created, want refused")
				}
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want Invalid naming %q", err, tc.want)
				}
			})
		}
		if err := c.Delete(ctx, imported); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("GKE clusters", func(t *testing.T) {
		gke := func(name string, mutate func(*gkev1.GKEClusterConfigSpec)) *mgmtv1.Cluster {
			spec := &gkev1.GKEClusterConfigSpec{ProjectID: "my-project", Region: "us-central1", ClusterName: name,
				GoogleCredentialSecret: "clustersync-global-data:google", KubernetesVersion: ptr("1.31"), Labels: ptr(map[string]string{}),
				NodePools: ptr([]gkev1.GKENodePoolConfig{{Name: "pool-1", InitialNodeCount: ptr(int64(1))}})}
			if mutate != nil {
				mutate(spec)
			}
			return &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name, GKEConfig: spec}}
		}
		ok := gke("central", nil)
		if err := c.Create(ctx, ok); err != nil {
			t.Fatal(err)
		}
		if labels := ok.Spec.GKEConfig.Labels; labels == nil || len(*labels) != 0 || ok.Spec.GKEConfig.Network != nil {
			t.Errorf("managed empty labels / unmanaged network came back as %v / %v", labels, ok.Spec.GKEConfig.Network)
		}
		ok.Status.Driver, ok.Status.Phase = mgmtv1.DriverGKE, mgmtv1.PhaseActive
		ok.Status.GKEStatus = &mgmtv1.GKEStatus{UpstreamSpec: ok.Spec.GKEConfig, AppliedSpec: &gkev1.GKEClusterConfigSpec{
			ProjectID: "my-project", Region: "us-central1", ClusterName: "central", GoogleCredentialSecret: "clustersync-global-data:google"}}
		if err := c.Status().Update(ctx, ok); err != nil {
			t.Fatalf("status with an applied spec of identity fields only: %v", err)
		}
		imported := gke("imported-gke", func(s *gkev1.GKEClusterConfigSpec) {
			s.Imported, s.KubernetesVersion, s.Labels, s.NodePools, s.Region, s.Zone = true, nil, nil, nil, "", "us-central1-a"
		})
		if err := c.Create(ctx, imported); err != nil {
			t.Fatalf("imported zonal GKE cluster with every field unmanaged: %v", err)
		}
		autopilot := gke("autopilot", func(s *gkev1.GKEClusterConfigSpec) {
			s.NodePools, s.AutopilotConfig = nil, &gkev1.GKEAutopilotConfig{Enabled: true}
		})
		if err := c.Create(ctx, autopilot); err != nil {
			t.Fatalf("Autopilot cluster without pools: %v", err)
		}
		for _, tc := range []struct {
			name   string
			mutate func(*mgmtv1.ClusterSpec)
			want   string
		}{
			{"two drivers", func(s *mgmtv1.ClusterSpec) { s.EKSConfig = validSpec() }, "exactly one of spec.eksConfig, spec.aksConfig, spec.gkeConfig and spec.importedConfig"},
			{"created without a version", func(s *mgmtv1.ClusterSpec) { s.GKEConfig.KubernetesVersion = nil }, "needs kubernetesVersion and at least one of nodePools"},
			{"created without pools", func(s *mgmtv1.ClusterSpec) { s.GKEConfig.NodePools = ptr([]gkev1.GKENodePoolConfig{}) }, "at least one of nodePools"},
			{"region and zone", func(s *mgmtv1.ClusterSpec) { s.GKEConfig.Zone = "us-central1-a" }, "set exactly one of region (a regional cluster) and zone"},
			{"neither region nor zone", func(s *mgmtv1.ClusterSpec) { s.GKEConfig.Region = "" }, "set exactly one of region (a regional cluster) and zone"},
			{"bad pool name", func(s *mgmtv1.ClusterSpec) { (*s.GKEConfig.NodePools)[0].Name = "Pool_1" }, "spec.gkeConfig.nodePools[0].name"},
			{"bad version", func(s *mgmtv1.ClusterSpec) { s.GKEConfig.KubernetesVersion = ptr("latest") }, "spec.gkeConfig.kubernetesVersion"},
			{"bad maintenance window", func(s *mgmtv1.ClusterSpec) { s.GKEConfig.MaintenanceWindow = ptr("25:00") }, "spec.gkeConfig.maintenanceWindow"},
			{"bad credential reference", func(s *mgmtv1.ClusterSpec) { s.GKEConfig.GoogleCredentialSecret = "google" }, "spec.gkeConfig.googleCredentialSecret"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				bad := gke("invalid-gke", nil)
				tc.mutate(&bad.Spec)
				err := c.Create(ctx, bad)
				if err == nil {
					_ = c.Delete(ctx, bad)
					t.Fatal("created, want refused")
				}
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want Invalid naming %q", err, tc.want)
				}
			})
		}
		for _, cl := range []*mgmtv1.Cluster{ok, imported, autopilot} {
			if err := c.Delete(ctx, cl); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("status subresource", func(t *testing.T) {
		cl := &mgmtv1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "prod"}, cl); err != nil {
			t.Fatal(err)
		}
		upstream := validSpec()
		upstream.PublicAccess, upstream.PrivateAccess = ptr(true), ptr(false)
		cl.Status = mgmtv1.ClusterStatus{
			Driver: mgmtv1.DriverEKS,
			Phase:  mgmtv1.PhaseProvisioning,
			Conditions: []metav1.Condition{{Type: mgmtv1.ConditionProvisioned, Status: metav1.ConditionUnknown,
				Reason: "Creating", Message: "creating in EKS", LastTransitionTime: metav1.Now()}},
			EKSStatus: &mgmtv1.EKSStatus{UpstreamSpec: upstream, AppliedSpec: validSpec(), VirtualNetwork: "vpc-1", Subnets: []string{"subnet-1"},
				PrivateRequiresTunnel: ptr(false), ManagedLaunchTemplateVersions: map[string]string{"ng-a": "1"}},
			APIEndpoint: "https://example.eks.amazonaws.com",
			Version:     "1.32",
		}
		if err := c.Status().Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
		got := &mgmtv1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "prod"}, got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != mgmtv1.PhaseProvisioning || got.Status.EKSStatus == nil ||
			!reflect.DeepEqual(got.Status.EKSStatus.UpstreamSpec, upstream) ||
			!reflect.DeepEqual(got.Status.EKSStatus.AppliedSpec, validSpec()) ||
			len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != mgmtv1.ConditionProvisioned {
			t.Errorf("status did not round-trip: %+v", got.Status)
		}

		// A write to the main resource leaves status alone.
		got.Status.Phase = mgmtv1.PhaseError
		got.Spec.DisplayName = "renamed"
		if err := c.Update(ctx, got); err != nil {
			t.Fatal(err)
		}
		after := &mgmtv1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "prod"}, after); err != nil {
			t.Fatal(err)
		}
		if after.Status.Phase != mgmtv1.PhaseProvisioning || after.Spec.DisplayName != "renamed" {
			t.Errorf("after a main-resource update: phase %q (want unchanged), displayName %q", after.Status.Phase, after.Spec.DisplayName)
		}
	})

	t.Run("EKSClusterConfig", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: eksv1.Namespace}}
		if err := c.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		cfg := &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: eksv1.Namespace}, Spec: *validSpec()}
		if err := c.Create(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		cfg.Status = eksv1.EKSClusterConfigStatus{OperatorStatus: hostedv1.OperatorStatus{Phase: eksv1.PhaseCreating}, NetworkFieldsSource: eksv1.NetworkFieldsGenerated,
			CompletedUpdateIDs: []string{"u-1"}}
		if err := c.Status().Update(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		bad := &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: eksv1.Namespace}, Spec: *validSpec()}
		(*bad.Spec.NodeGroups)[0].MinSize = ptr(int64(9))
		err := c.Create(ctx, bad)
		if err == nil || !strings.Contains(err.Error(), "spec.nodeGroups[0].minSize") {
			t.Errorf("EKSClusterConfig with minSize > maxSize: %v, want refused naming spec.nodeGroups[0].minSize", err)
		}
		bad.Name = "bad-phase"
		(*bad.Spec.NodeGroups)[0].MinSize = ptr(int64(1))
		if err := c.Create(ctx, bad); err != nil {
			t.Fatal(err)
		}
		bad.Status.Phase = "running"
		if err := c.Status().Update(ctx, bad); err == nil || !strings.Contains(err.Error(), "status.phase") {
			t.Errorf("status.phase %q: %v, want refused", bad.Status.Phase, err)
		}
	})

	// What `kubectl get` prints: the server's Table for each resource.
	t.Run("kubectl get columns", func(t *testing.T) {
		for _, tc := range []struct {
			path string
			cols []string
			row  []any
		}{
			{"/apis/management.clustersync.io/v1alpha1/clusters", []string{"Name", "Driver", "Phase", "Version", "Age"},
				[]any{"prod", "EKS", "Provisioning", "1.32"}},
			{"/apis/eks.clustersync.io/v1/namespaces/" + eksv1.Namespace + "/eksclusterconfigs", []string{"Name", "Region", "Phase", "Version", "Age"},
				[]any{"bad-phase", "us-west-2", nil, "1.32"}},
			{"/apis/management.clustersync.io/v1alpha1/clusters?fieldSelector=metadata.name%3Dwesteu", []string{"Name", "Driver", "Phase", "Version", "Age"},
				[]any{"westeu", "AKS", "Active"}},
		} {
			table := getTable(t, cp.Config, tc.path)
			var cols []string
			for _, col := range table.ColumnDefinitions {
				cols = append(cols, col.Name)
			}
			if !reflect.DeepEqual(cols, tc.cols) {
				t.Errorf("%s: columns %v, want %v", tc.path, cols, tc.cols)
			}
			if len(table.Rows) == 0 || len(table.Rows[0].Cells) != len(tc.cols) {
				t.Fatalf("%s: rows %+v", tc.path, table.Rows)
			}
			if got := table.Rows[0].Cells[:len(tc.row)]; !reflect.DeepEqual(got, tc.row) {
				t.Errorf("%s: first row %v, want %v", tc.path, got, tc.row)
			}
		}
	})
}

func getTable(t *testing.T, cfg *rest.Config, path string) *metav1.Table {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		t.Fatal(err)
	}
	return table
}
