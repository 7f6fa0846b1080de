package dashboard

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/clouds"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// The Cluster each form builds, and the problems found before the API
// server is asked, each on its input and naming the Cluster's field.
func TestBuildCluster(t *testing.T) {
	const cred = "clustersync-global-data:aws"
	meta := metav1.ObjectMeta{Name: "prod"}
	for _, tc := range []struct {
		name string
		form addForm
		want mgmtv1.ClusterSpec
		// errs are "input: message prefix".
		errs []string
	}{{
		name: "EKS import",
		form: addForm{Kind: "eks", Name: "prod", Values: map[string]string{"cloudName": "prod-eks", "region": "us-west-2"}, Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "prod-eks", Region: "us-west-2",
			AmazonCredentialSecret: cred, Imported: true}},
	}, {
		name: "EKS with a display name",
		form: addForm{Kind: "eks", Name: "prod", Values: map[string]string{"cloudName": "p", "region": "eu-west-1"}, DisplayName: "Production", Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "Production", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "p", Region: "eu-west-1",
			AmazonCredentialSecret: cred, Imported: true}},
	}, {
		name: "EKS without region and credential",
		form: addForm{Kind: "eks", Name: "prod", Values: map[string]string{"cloudName": "p"}},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "p", Imported: true}},
		errs: []string{"region: spec.eksConfig.region: required", "credential: spec.eksConfig.amazonCredentialSecret: required"},
	}, {
		name: "a credential not namespace:name",
		form: addForm{Kind: "eks", Name: "prod", Values: map[string]string{"cloudName": "p", "region": "r"}, Credential: "aws"},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "p", Region: "r", AmazonCredentialSecret: "aws", Imported: true}},
		errs: []string{`credential: spec.eksConfig.amazonCredentialSecret "aws": want namespace:name`},
	}, {
		name: "an invalid name",
		form: addForm{Kind: "eks", Name: "Prod_1", Values: map[string]string{"cloudName": "p", "region": "r"}, Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "Prod_1", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "p", Region: "r", AmazonCredentialSecret: cred, Imported: true}},
		errs: []string{"name: metadata.name: a lowercase RFC 1123 subdomain"},
	}, {
		name: "AKS import",
		form: addForm{Kind: "aks", Name: "prod", Values: map[string]string{"cloudName": "aks1", "resourceGroup": "rg", "location": "eastus"}, Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", AKSConfig: &aksv1.AKSClusterConfigSpec{ClusterName: "aks1", ResourceGroup: "rg",
			ResourceLocation: "eastus", AzureCredentialSecret: cred, Imported: true}},
	}, {
		name: "AKS without resource group",
		form: addForm{Kind: "aks", Name: "prod", Values: map[string]string{"cloudName": "aks1", "location": "eastus"}, Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", AKSConfig: &aksv1.AKSClusterConfigSpec{ClusterName: "aks1",
			ResourceLocation: "eastus", AzureCredentialSecret: cred, Imported: true}},
		errs: []string{"resourceGroup: spec.aksConfig.resourceGroup: required"},
	}, {
		name: "GKE zonal",
		form: addForm{Kind: "gke", Name: "prod", Values: map[string]string{"project": "my-project", "location": "us-central1-a", "cloudName": "g"}, Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", GKEConfig: &gkev1.GKEClusterConfigSpec{ProjectID: "my-project", Zone: "us-central1-a",
			ClusterName: "g", GoogleCredentialSecret: cred, Imported: true}},
	}, {
		name: "GKE regional",
		form: addForm{Kind: "gke", Name: "prod", Values: map[string]string{"project": "my-project", "location": "europe-west4", "cloudName": "g"}, Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", GKEConfig: &gkev1.GKEClusterConfigSpec{ProjectID: "my-project", Region: "europe-west4",
			ClusterName: "g", GoogleCredentialSecret: cred, Imported: true}},
	}, {
		name: "GKE without project",
		form: addForm{Kind: "gke", Name: "prod", Values: map[string]string{"location": "us-central1-a", "cloudName": "g"}, Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", GKEConfig: &gkev1.GKEClusterConfigSpec{Zone: "us-central1-a",
			ClusterName: "g", GoogleCredentialSecret: cred, Imported: true}},
		errs: []string{"project: spec.gkeConfig.projectID: required"},
	}, {
		name: "registered, as cluster import makes it",
		form: addForm{Kind: kindRegistered, Name: "prod", Members: "alice=cluster-owner\n\n group:devs=read-only \nsa:ci:bot=cluster-member"},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", ImportedConfig: &mgmtv1.ImportedConfig{}, Members: []mgmtv1.ClusterMember{
			{Kind: "User", Name: "alice", Role: mgmtv1.RoleClusterOwner}, {Kind: "Group", Name: "devs", Role: mgmtv1.RoleReadOnly},
			{Kind: "ServiceAccount", Name: "ci:bot", Role: mgmtv1.RoleClusterMember}}},
	}, {
		name: "registered with a bad member",
		form: addForm{Kind: kindRegistered, Name: "prod", Members: "alice=admin"},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", ImportedConfig: &mgmtv1.ImportedConfig{}},
		errs: []string{`members: spec.members: "alice=admin": role "admin"`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := buildCluster(cloudOf(t, tc.form.Kind), tc.form)
			wantMeta := meta
			wantMeta.Name = tc.form.Name
			if !reflect.DeepEqual(wantMeta, c.ObjectMeta) {
				t.Errorf("metadata %+v, want %+v", c.ObjectMeta, wantMeta)
			}
			if !reflect.DeepEqual(tc.want, c.Spec) {
				t.Errorf("spec\n%s\nwant\n%s", yamlOf(t, c.Spec), yamlOf(t, tc.want))
			}
			if len(errs) != len(tc.errs) {
				t.Fatalf("problems %v, want %v", errs, tc.errs)
			}
			for i, e := range errs {
				if got := e.Input + ": " + e.Message; !strings.HasPrefix(got, tc.errs[i]) {
					t.Errorf("problem %q, want it to start with %q", got, tc.errs[i])
				}
			}
		})
	}
}

// The YAML a form shows: the Cluster as kubectl would apply it, with no
// status and no empty creationTimestamp.
func TestClusterYAML(t *testing.T) {
	c, _ := buildCluster(cloudOf(t, "eks"), addForm{Kind: "eks", Name: "prod", Values: map[string]string{"cloudName": "p", "region": "us-west-2"}, Credential: "clustersync-global-data:aws"})
	got, err := clusterYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: management.clustersync.io/v1alpha1
kind: Cluster
metadata:
  name: prod
spec:
  displayName: prod
  eksConfig:
    amazonCredentialSecret: clustersync-global-data:aws
    displayName: p
    imported: true
    region: us-west-2
`
	if got != want {
		t.Errorf("YAML\n%s\nwant\n%s", got, want)
	}
	r, _ := buildCluster(management.Descriptor{}, addForm{Kind: kindRegistered, Name: "edge", Members: "alice=cluster-owner\ngroup:devs=read-only"})
	if cmd := importCommand(r); cmd != "clustersync cluster import edge --member alice=cluster-owner --member group:devs=read-only" {
		t.Errorf("import command %q", cmd)
	}
}

// The API server's Invalid causes land on the form's inputs.
func TestCauseInput(t *testing.T) {
	for _, tc := range []struct{ kind, field, want string }{
		{"eks", "spec.eksConfig.region", "region"},
		{"eks", "spec.eksConfig.amazonCredentialSecret", "credential"},
		{"eks", "metadata.name", "name"},
		{"aks", "spec.aksConfig.resourceLocation", "location"},
		{"gke", "spec.gkeConfig.projectID", "project"},
		{"gke", "spec.gkeConfig.region", "location"},
		{"gke", "spec.gkeConfig", ""},
		{kindRegistered, "spec.members[0].role", "members"},
		{kindRegistered, "spec.importedConfig.members[0].role", "members"},
	} {
		if got := causeInput(cloudOf(t, tc.kind), tc.field); got != tc.want {
			t.Errorf("causeInput(%s, %s) = %q, want %q", tc.kind, tc.field, got, tc.want)
		}
	}
}

// cloudOf is the row of the table of clouds with key; the zero Descriptor
// (a registered cluster's form) for kindRegistered.
func cloudOf(t *testing.T, key string) management.Descriptor {
	t.Helper()
	if key == kindRegistered {
		return management.Descriptor{}
	}
	d, ok := clouds.ByKey(key)
	if !ok {
		t.Fatalf("no cloud %q", key)
	}
	return d
}

// yamlOf is v as YAML, for failure messages.
func yamlOf(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
