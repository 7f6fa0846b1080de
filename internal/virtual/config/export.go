package config

import (
	"fmt"
	"net/url"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ExportKubeConfig is vCluster's exportKubeConfig: the kubeconfig of the
// virtual cluster the syncer keeps in host Secret vc-NAME, and in the
// Secrets secret or additionalSecrets name (see KubeconfigSecrets).
type ExportKubeConfig struct {
	// Context is the context (and cluster and user) name of the
	// kubeconfig of vc-NAME and of secret; "" for the virtual cluster's
	// name.
	Context string `json:"context"`
	// Server is the API server URL it names; "" for the host Service's
	// in-host address, https://NAME.NAMESPACE.svc:443.
	Server string `json:"server"`
	// Insecure skips the check of the API server's certificate (the CA
	// is left out).
	Insecure bool `json:"insecure"`
	// ServiceAccount, when its name is set, gives the kubeconfig a token
	// of that service account of the virtual cluster instead of the admin
	// certificate.
	ServiceAccount ExportServiceAccount `json:"serviceAccount"`
	// Secret is one more Secret with the same properties (vCluster's
	// older key; deprecated there in favour of AdditionalSecrets, and
	// refused beside it, as vCluster's chart refuses it).
	Secret SecretReference `json:"secret"`
	// AdditionalSecrets are more Secrets, each with properties of its own.
	AdditionalSecrets []AdditionalKubeconfigSecret `json:"additionalSecrets"`
}

// KubeconfigProperties say what an exported kubeconfig holds: its
// context name, server, whether its server's certificate is checked, and
// whose credentials it carries (ExportKubeConfig's fields of the same
// names).
type KubeconfigProperties struct {
	// Context is the context, cluster and user name; "" for the virtual
	// cluster's name.
	Context string
	// Server is the API server URL; "" for the host Service's in-host
	// address.
	Server string
	// Insecure leaves the CA out and skips the server certificate's check.
	Insecure bool
	// ServiceAccount, when named, gives a token of it instead of the
	// admin certificate.
	ServiceAccount ExportServiceAccount
}

// properties are e's top-level KubeconfigProperties.
func (e ExportKubeConfig) properties() KubeconfigProperties {
	return KubeconfigProperties{Context: e.Context, Server: e.Server, Insecure: e.Insecure, ServiceAccount: e.ServiceAccount}
}

// ExportServiceAccount is the service account of the virtual cluster
// whose token an exported kubeconfig carries.
type ExportServiceAccount struct {
	// Name of the service account; "" for the admin certificate.
	Name string `json:"name"`
	// Namespace of the service account in the virtual cluster; "" for
	// kube-system.
	Namespace string `json:"namespace"`
	// ClusterRole, when set, is bound to the service account
	// (ClusterRoleBinding vcluster-sa-NAME-NAMESPACE), which the syncer
	// creates when missing; without it the service account must exist.
	ClusterRole string `json:"clusterRole"`
}

// SecretReference names a host Secret.
type SecretReference struct {
	// Name of the Secret; "" for vc-NAME.
	Name string `json:"name"`
	// Namespace of the Secret; "" for the virtual cluster's host namespace.
	Namespace string `json:"namespace"`
}

// AdditionalKubeconfigSecret is one entry of
// exportKubeConfig.additionalSecrets: a Secret (name, namespace) and its
// kubeconfig's properties (as ExportKubeConfig's).
type AdditionalKubeconfigSecret struct {
	// Name of the Secret; "" for vc-NAME.
	Name string `json:"name"`
	// Namespace of the Secret; "" for the virtual cluster's host namespace.
	Namespace string `json:"namespace"`
	// Context is its kubeconfig's context name, as ExportKubeConfig's.
	Context string `json:"context"`
	// Server is its kubeconfig's server, as ExportKubeConfig's.
	Server string `json:"server"`
	// Insecure skips the server certificate's check, as ExportKubeConfig's.
	Insecure bool `json:"insecure"`
	// ServiceAccount gives its kubeconfig a token, as ExportKubeConfig's.
	ServiceAccount ExportServiceAccount `json:"serviceAccount"`
}

// KubeconfigSecret is one host Secret the syncer keeps a kubeconfig in.
type KubeconfigSecret struct {
	// Name and Namespace of the Secret.
	Name, Namespace string
	// Properties of its kubeconfig.
	KubeconfigProperties
}

// KubeconfigSecrets returns the Secrets exportKubeConfig asks for, for
// virtual cluster name installed in host namespace namespace: vc-NAME in
// namespace with the top-level properties, then secret (with the same
// properties) or each of additionalSecrets, a missing name meaning vc-NAME
// and a missing namespace the host namespace, as vCluster's
// ExportKubeConfig.GetAdditionalSecrets and WriteKubeConfigToSecret do
// (https://github.com/loft-sh/vcluster/blob/v0.36.1/pkg/setup/controllers.go).
// An entry that names vc-NAME in namespace again replaces the first.
func (e ExportKubeConfig) KubeconfigSecrets(name, namespace string) []KubeconfigSecret {
	out := []KubeconfigSecret{{Name: "vc-" + name, Namespace: namespace, KubeconfigProperties: e.properties()}}
	more := e.AdditionalSecrets
	if e.Secret != (SecretReference{}) {
		more = []AdditionalKubeconfigSecret{{Name: e.Secret.Name, Namespace: e.Secret.Namespace,
			Context: e.Context, Server: e.Server, Insecure: e.Insecure, ServiceAccount: e.ServiceAccount}}
	}
	for _, a := range more {
		s := KubeconfigSecret{Name: a.Name, Namespace: a.Namespace, KubeconfigProperties: KubeconfigProperties{
			Context: a.Context, Server: a.Server, Insecure: a.Insecure, ServiceAccount: a.ServiceAccount}}
		if s.Name == "" {
			s.Name = "vc-" + name
		}
		if s.Namespace == "" {
			s.Namespace = namespace
		}
		if s.Name == out[0].Name && s.Namespace == out[0].Namespace {
			out[0] = s
			continue
		}
		out = append(out, s)
	}
	return out
}

// validate checks exportKubeConfig: secret and additionalSecrets not
// both, every additional Secret naming a name or a namespace (vCluster's
// chart refuses both cases too), names and namespaces valid, servers
// https URLs, service account names valid.
func (e ExportKubeConfig) validate(fail func(path, format string, args ...any)) {
	const p = "exportKubeConfig"
	if e.Secret != (SecretReference{}) && len(e.AdditionalSecrets) > 0 {
		fail(p+".secret", "cannot be set beside additionalSecrets (vCluster refuses both too); move it into additionalSecrets")
	}
	e.properties().validate(p, fail)
	e.Secret.validate(p+".secret", fail)
	for i, a := range e.AdditionalSecrets {
		key := fmt.Sprintf("%s.additionalSecrets[%d]", p, i)
		ref := SecretReference{Name: a.Name, Namespace: a.Namespace}
		if ref == (SecretReference{}) {
			fail(key, "needs a name or a namespace (else it is vc-NAME itself)")
		}
		ref.validate(key, fail)
		KubeconfigProperties{Context: a.Context, Server: a.Server, Insecure: a.Insecure, ServiceAccount: a.ServiceAccount}.validate(key, fail)
	}
}

func (r SecretReference) validate(p string, fail func(path, format string, args ...any)) {
	if r.Name != "" {
		if errs := validation.IsDNS1123Subdomain(r.Name); len(errs) > 0 {
			fail(p+".name", "invalid Secret name %q: %v", r.Name, errs)
		}
	}
	if r.Namespace != "" {
		if errs := validation.IsDNS1123Label(r.Namespace); len(errs) > 0 {
			fail(p+".namespace", "invalid namespace %q: %v", r.Namespace, errs)
		}
	}
}

func (k KubeconfigProperties) validate(p string, fail func(path, format string, args ...any)) {
	if k.Server != "" {
		if u, err := url.Parse(k.Server); err != nil || u.Scheme != "https" || u.Host == "" {
			fail(p+".server", "must be an https URL such as https://vc.example.com:443, got %q", k.Server)
		}
	}
	sa := k.ServiceAccount
	if sa.Name != "" {
		if errs := validation.IsDNS1123Subdomain(sa.Name); len(errs) > 0 {
			fail(p+".serviceAccount.name", "invalid name %q: %v", sa.Name, errs)
		}
	}
	if sa.Name == "" && (sa.Namespace != "" || sa.ClusterRole != "") {
		fail(p+".serviceAccount.name", "required with serviceAccount.namespace or .clusterRole")
	}
	if sa.Namespace != "" {
		if errs := validation.IsDNS1123Label(sa.Namespace); len(errs) > 0 {
			fail(p+".serviceAccount.namespace", "invalid namespace %q: %v", sa.Namespace, errs)
		}
	}
}
