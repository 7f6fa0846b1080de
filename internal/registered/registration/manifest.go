package registration

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Names of what the manifest installs downstream (Rancher's cattle-system
// objects under clustersync's names).
const (
	// AgentNamespace holds the agent and its Secret.
	AgentNamespace = "clustersync-system"
	// AgentName names the ServiceAccount, ClusterRole, ClusterRoleBinding
	// and Deployment of the agent.
	AgentName = "clustersync-agent"
	// CredentialsSecret holds the server URL (key "url") and the
	// registration token (key "token").
	CredentialsSecret = "clustersync-agent-credentials"
)

// Labels on every object of the manifest; the cleanup Job deletes by them.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelCluster   = "clustersync.io/cluster"
	ManagedByValue = "clustersync"
)

// Environment of the agent container.
const (
	EnvServer     = "CLUSTERSYNC_SERVER"
	EnvCAChecksum = "CLUSTERSYNC_CA_CHECKSUM"
	EnvCluster    = "CLUSTERSYNC_CLUSTER"
	EnvToken      = "CLUSTERSYNC_TOKEN"
)

// ManifestOptions are the inputs of the import manifest.
type ManifestOptions struct {
	// ServerURL is the management server's https URL.
	ServerURL string
	// CAChecksum is CAChecksum of the server's CA PEM (64 hex characters).
	CAChecksum string
	// Token is the registration token.
	Token string
	// Cluster is the Cluster's name on the management side.
	Cluster string
	// Image is the agent's container image.
	Image string
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (o ManifestOptions) validate() error {
	for _, f := range []struct{ name, v string }{{"server URL", o.ServerURL}, {"CA checksum", o.CAChecksum}, {"token", o.Token}, {"cluster", o.Cluster}, {"image", o.Image}} {
		if f.v == "" {
			return fmt.Errorf("import manifest: %s is required", f.name)
		}
	}
	if u, err := url.Parse(o.ServerURL); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("import manifest: server URL %q: want https://host[:port]", o.ServerURL)
	}
	if !hex64.MatchString(o.CAChecksum) {
		return fmt.Errorf("import manifest: CA checksum %q: want 64 lowercase hex characters (SHA-256)", o.CAChecksum)
	}
	return nil
}

// ManifestObjects returns the objects of the import manifest, in apply
// order: Namespace, ServiceAccount, ClusterRole (everything, as Rancher's
// agent has), ClusterRoleBinding, the credentials Secret and the agent
// Deployment. They are deterministic (no generated names, no timestamps),
// so applying the manifest twice changes nothing and never restarts a
// connected agent; the Deployment uses strategy Recreate so that two agents
// never run at once. Errors: a missing option, a server URL that is not
// https, a checksum that is not SHA-256 hex.
func ManifestObjects(o ManifestOptions) ([]runtime.Object, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	labels := map[string]string{LabelName: AgentName, LabelManagedBy: ManagedByValue, LabelCluster: o.Cluster}
	meta := func(kind, apiVersion, name, ns string) (metav1.TypeMeta, metav1.ObjectMeta) {
		return metav1.TypeMeta{Kind: kind, APIVersion: apiVersion}, metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	var ns corev1.Namespace
	ns.TypeMeta, ns.ObjectMeta = meta("Namespace", "v1", AgentNamespace, "")
	var sa corev1.ServiceAccount
	sa.TypeMeta, sa.ObjectMeta = meta("ServiceAccount", "v1", AgentName, AgentNamespace)
	var role rbacv1.ClusterRole
	role.TypeMeta, role.ObjectMeta = meta("ClusterRole", "rbac.authorization.k8s.io/v1", AgentName, "")
	role.Rules = []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
	}
	var binding rbacv1.ClusterRoleBinding
	binding.TypeMeta, binding.ObjectMeta = meta("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", AgentName, "")
	binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AgentName}
	binding.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: AgentName, Namespace: AgentNamespace}}
	var secret corev1.Secret
	secret.TypeMeta, secret.ObjectMeta = meta("Secret", "v1", CredentialsSecret, AgentNamespace)
	secret.Type = corev1.SecretTypeOpaque
	// data, not stringData: kubectl apply records and compares data, so a
	// second apply of the same manifest is a no-op (stringData is merged
	// into data by the server and shows up as a change every time).
	secret.Data = map[string][]byte{"url": []byte(o.ServerURL), "token": []byte(o.Token)}

	var dep appsv1.Deployment
	dep.TypeMeta, dep.ObjectMeta = meta("Deployment", "apps/v1", AgentName, AgentNamespace)
	selector := map[string]string{LabelName: AgentName}
	dep.Spec = appsv1.DeploymentSpec{
		Replicas: ptr.To(int32(1)),
		Selector: &metav1.LabelSelector{MatchLabels: selector},
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				ServiceAccountName: AgentName,
				Containers: []corev1.Container{{
					Name:  "agent",
					Image: o.Image,
					Args:  []string{"agent"},
					Env: []corev1.EnvVar{
						{Name: EnvServer, Value: o.ServerURL},
						{Name: EnvCAChecksum, Value: o.CAChecksum},
						{Name: EnvCluster, Value: o.Cluster},
						{Name: EnvToken, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
							LocalObjectReference: corev1.LocalObjectReference{Name: CredentialsSecret}, Key: "token"}}},
					},
				}},
			},
		},
	}
	return []runtime.Object{&ns, &sa, &role, &binding, &secret, &dep}, nil
}

// Manifest renders ManifestObjects as multi-document YAML ("---"
// separated), the body of /v1/import/<token>_<cluster>.yaml. Errors are
// ManifestObjects'.
func Manifest(o ManifestOptions) ([]byte, error) {
	objs, err := ManifestObjects(o)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for i, obj := range objs {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}
