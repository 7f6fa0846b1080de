package gke

import (
	"regexp"

	"google.golang.org/api/option"
	ctrl "sigs.k8s.io/controller-runtime"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// cloudKey is GKE's Descriptor.Key.
const cloudKey = "gke"

// EmulatorToken is the bearer token the GKE clients send to an emulator
// (CloudOptions.Endpoint without CloudOptions.Credentials).
const EmulatorToken = "clustersync-dev"

// zonePattern is a GKE zone (a region and a letter, us-central1-a), as
// opposed to a region (us-central1).
var zonePattern = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+-[a-z]$`)

// Traits are GKE's names and rules, and how a Cluster holds its config
// (spec.gkeConfig) and status (status.gkeStatus).
func Traits() management.Traits[gkev1.GKEClusterConfigSpec, *gkev1.GKEClusterConfig] {
	return management.Traits[gkev1.GKEClusterConfigSpec, *gkev1.GKEClusterConfig]{
		Traits: engine.Traits[gkev1.GKEClusterConfigSpec, *gkev1.GKEClusterConfig]{
			Name: mgmtv1.DriverGKE, Finalizer: Finalizer, Options: ManagedOptions(),
			New:      func() *gkev1.GKEClusterConfig { return &gkev1.GKEClusterConfig{} },
			Imported: func(spec gkev1.GKEClusterConfigSpec) bool { return spec.Imported },
			// The create call carries every non-nil field, pools included.
			CreatedApplied: func(spec gkev1.GKEClusterConfigSpec) gkev1.GKEClusterConfigSpec { return spec },
			Order:          OrderUpdates, CallGroup: callGroup, Vet: vet, Retryable: Retryable,
			// An operation GKE reports DONE without an error applied its
			// change, and versions are reported at the config's precision,
			// not the pushed one.
			VerifyLanded: false,
		},
		ConfigField: "gkeConfig",
		Config:      func(c *mgmtv1.Cluster) *gkev1.GKEClusterConfigSpec { return c.Spec.GKEConfig },
		SetConfig:   func(c *mgmtv1.Cluster, config gkev1.GKEClusterConfigSpec) { c.Spec.GKEConfig = &config },
		Status:      status, CopyStatus: copyStatus, NodePools: nodePools,
	}
}

// Cloud is GKE's row in the table of clouds (internal/hosted/clouds).
// CloudOptions.Credentials, when set, is a CredentialFunc; with an
// Endpoint and none, the token is EmulatorToken.
func Cloud() management.Descriptor {
	t := Traits()
	return management.Descriptor{
		Name: t.Name, Key: cloudKey, ConfigField: t.ConfigField, Product: "Google GKE",
		Endpoint: "send GKE calls to this URL instead of container.googleapis.com (an emulator, e.g. from 'clustersync dev gke'); Google's token service is not asked",
		Credentials: "the service account's JSON key comes from the Secret each cluster's spec.gkeConfig.googleCredentialSecret names " +
			"(Rancher's key googlecredentialConfig-authEncodedJson)",
		PollWhat: "reads of a GKE cluster GKE is changing",
		Kind:     gkev1.GroupVersion.WithKind("GKEClusterConfig"),
		Import: management.ImportForm{
			Title: "Import a Google GKE cluster",
			Inputs: []management.FormInput{
				{Name: "project", Label: "Project ID", Fields: []string{"projectID"}},
				{Name: "location", Label: "Location", Placeholder: "us-central1-a", Fields: []string{"zone", "region"},
					Hint: "A zone (us-central1-a) for a zonal cluster, a region (us-central1) for a regional one."},
				{Name: "cloudName", Label: "GKE cluster name", Hint: "Its name in GKE (spec.gkeConfig.clusterName).", Fields: []string{"clusterName"}},
			},
			CredentialField: "googleCredentialSecret", CredentialKeys: "googlecredentialConfig-authEncodedJson (a service account's JSON key)",
			Config: func(c *mgmtv1.Cluster, v map[string]string, credential string) {
				g := &gkev1.GKEClusterConfigSpec{ProjectID: v["project"], ClusterName: v["cloudName"], GoogleCredentialSecret: credential, Imported: true}
				if zonePattern.MatchString(v["location"]) {
					g.Zone = v["location"]
				} else {
					g.Region = v["location"]
				}
				c.Spec.GKEConfig = g
			},
		},
		AddToScheme: gkev1.AddToScheme,
		Register:    register,
		View:        func(c *mgmtv1.Cluster) (management.View, bool) { return management.ViewOf(t, c) },
	}
}

// register adds the GKE management controller and operator to mgr, each
// sending its own application ID.
func register(mgr ctrl.Manager, o management.CloudOptions) error {
	creds, err := management.CredentialsAs[CredentialFunc](o, mgmtv1.DriverGKE)
	if err != nil {
		return err
	}
	if creds == nil && o.Endpoint != "" {
		creds = StaticCredentials(EmulatorToken)
	}
	m := &Management{Client: mgr.GetClient(), NewClients: NewClientsFactory(o.Endpoint, creds, option.WithUserAgent(management.AppID))}
	p := &Provider{Client: mgr.GetClient(), NewClients: NewClientsFactory(o.Endpoint, creds, option.WithUserAgent(management.OperatorAppID(cloudKey)))}
	return management.Register(mgr, o, cloudKey, Traits(), m, p)
}

// Finalizer holds back the deletion of a GKEClusterConfig whose cluster
// clustersync created until the cluster is gone.
const Finalizer = "gke.clustersync.io/cleanup"

// ManagedOptions returns the managed-field options of
// GKEClusterConfigSpec: pools are compared by name.
func ManagedOptions() managed.Options {
	return managed.Options{KeyedLists: map[string]string{"nodePools": "name"}}
}
