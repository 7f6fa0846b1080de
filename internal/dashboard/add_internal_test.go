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
		form: addForm{Kind: kindEKS, Name: "prod", CloudName: "prod-eks", Region: "us-west-2", Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "prod-eks", Region: "us-west-2",
			AmazonCredentialSecret: cred, Imported: true}},
	}, {
		name: "EKS with a display name",
		form: addForm{Kind: kindEKS, Name: "prod", DisplayName: "Production", CloudName: "p", Region: "eu-west-1", Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "Production", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "p", Region: "eu-west-1",
			AmazonCredentialSecret: cred, Imported: true}},
	}, {
		name: "EKS without region and credential",
		form: addForm{Kind: kindEKS, Name: "prod", CloudName: "p"},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "p", Imported: true}},
		errs: []string{"region: spec.eksConfig.region: required", "credential: spec.eksConfig.amazonCredentialSecret: required"},
	}, {
		name: "a credential not namespace:name",
		form: addForm{Kind: kindEKS, Name: "prod", CloudName: "p", Region: "r", Credential: "aws"},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "p", Region: "r", AmazonCredentialSecret: "aws", Imported: true}},
		errs: []string{`credential: spec.eksConfig.amazonCredentialSecret "aws": want namespace:name`},
	}, {
		name: "an invalid name",
		form: addForm{Kind: kindEKS, Name: "Prod_1", CloudName: "p", Region: "r", Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "Prod_1", EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "p", Region: "r", AmazonCredentialSecret: cred, Imported: true}},
		errs: []string{"name: metadata.name: a lowercase RFC 1123 subdomain"},
	}, {
		name: "AKS import",
		form: addForm{Kind: kindAKS, Name: "prod", CloudName: "aks1", ResourceGroup: "rg", Location: "eastus", Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", AKSConfig: &aksv1.AKSClusterConfigSpec{ClusterName: "aks1", ResourceGroup: "rg",
			ResourceLocation: "eastus", AzureCredentialSecret: cred, Imported: true}},
	}, {
		name: "AKS without resource group",
		form: addForm{Kind: kindAKS, Name: "prod", CloudName: "aks1", Location: "eastus", Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", AKSConfig: &aksv1.AKSClusterConfigSpec{ClusterName: "aks1",
			ResourceLocation: "eastus", AzureCredentialSecret: cred, Imported: true}},
		errs: []string{"resourceGroup: spec.aksConfig.resourceGroup: required"},
	}, {
		name: "GKE zonal",
		form: addForm{Kind: kindGKE, Name: "prod", Project: "my-project", Location: "us-central1-a", CloudName: "g", Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", GKEConfig: &gkev1.GKEClusterConfigSpec{ProjectID: "my-project", Zone: "us-central1-a",
			ClusterName: "g", GoogleCredentialSecret: cred, Imported: true}},
	}, {
		name: "GKE regional",
		form: addForm{Kind: kindGKE, Name: "prod", Project: "my-project", Location: "europe-west4", CloudName: "g", Credential: cred},
		want: mgmtv1.ClusterSpec{DisplayName: "prod", GKEConfig: &gkev1.GKEClusterConfigSpec{ProjectID: "my-project", Region: "europe-west4",
			ClusterName: "g", GoogleCredentialSecret: cred, Imported: true}},
	}, {
		name: "GKE without project",
		form: addForm{Kind: kindGKE, Name: "prod", Location: "us-central1-a", CloudName: "g", Credential: cred},
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
			c, errs := buildCluster(tc.form)
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
	c, _ := buildCluster(addForm{Kind: kindEKS, Name: "prod", CloudName: "p", Region: "us-west-2", Credential: "clustersync-global-data:aws"})
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
	r, _ := buildCluster(addForm{Kind: kindRegistered, Name: "edge", Members: "alice=cluster-owner\ngroup:devs=read-only"})
	if cmd := importCommand(r); cmd != "clustersync cluster import edge --member alice=cluster-owner --member group:devs=read-only" {
		t.Errorf("import command %q", cmd)
	}
}

// The API server's Invalid causes land on the form's inputs.
func TestCauseInput(t *testing.T) {
	for _, tc := range []struct{ kind, field, want string }{
		{kindEKS, "spec.eksConfig.region", "region"},
		{kindEKS, "metadata.name", "name"},
		{kindAKS, "spec.aksConfig.resourceLocation", "location"},
		{kindGKE, "spec.gkeConfig.projectID", "project"},
		{kindGKE, "spec.gkeConfig", ""},
		{kindRegistered, "spec.members[0].role", "members"},
		{kindRegistered, "spec.importedConfig.members[0].role", "members"},
	} {
		if got := causeInput(tc.kind, tc.field); got != tc.want {
			t.Errorf("causeInput(%s, %s) = %q, want %q", tc.kind, tc.field, got, tc.want)
		}
	}
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
