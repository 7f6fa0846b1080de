package pods

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/policy"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/resources/nodes"
	"github.com/clustersync/clustersync/internal/virtual/resources/priorityclasses"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Environment is what pod translation needs to know about the virtual
// cluster's services on the host.
type Environment struct {
	Translator translate.Translator
	// HostServiceAccount is the host ServiceAccount every host pod runs as
	// (token automount off: host credentials never reach a tenant pod),
	// unless SyncServiceAccounts.
	HostServiceAccount string
	// SyncServiceAccounts (sync.toHost.serviceAccounts) makes a host pod
	// run as the host copy of its virtual pod's service account
	// (HostServiceAccountOf), token automount still off.
	SyncServiceAccounts bool
	// KubernetesIP is the host clusterIP of the Service backing the virtual
	// default/kubernetes Service; "" when not known yet.
	KubernetesIP string
	// Services lists the virtual Services of a namespace, for the service
	// environment variables of its pods (ServiceEnv); the syncer sets it.
	// nil: none.
	Services func(namespace string) []corev1.Service
	// DNSIP is the host clusterIP of the virtual kube-system/kube-dns Service;
	// "" when not known yet.
	DNSIP string
	// ClusterDomain is the virtual cluster's DNS domain, "cluster.local".
	ClusterDomain string
	// TranslateImage maps virtual images to host images (sync.toHost.pods.translateImage).
	TranslateImage map[string]string
	// EnforceTolerations are added to every host pod (sync.toHost.pods.enforceTolerations).
	EnforceTolerations []corev1.Toleration
	// RewriteHosts, when set, fixes /etc/hosts of StatefulSet pods
	// (sync.toHost.pods.rewriteHosts).
	RewriteHosts *RewriteHosts
	// UseSecretsForSATokens keeps the tokens of host pods in host Secrets
	// instead of pod annotations (sync.toHost.pods.useSecretsForSATokens).
	UseSecretsForSATokens bool
	// SyncPriorityClasses is sync.toHost.priorityClasses.enabled: a pod's
	// class then becomes the host copy of the tenant's class.
	SyncPriorityClasses bool
	// PriorityClass names the host class for a virtual pod's
	// priorityClassName (HostPriorityClass); the syncer sets it for each
	// pod from the virtual cluster's classes. nil: none.
	PriorityClass func(name string) string
	// EnforceNodeSelector is merged into the node selector of every host
	// pod (sync.fromHost.nodes.selector.labels; see NodeSelector).
	EnforceNodeSelector map[string]string
	// PodSecurity checks every pod before it is created or updated on the
	// host (policies.podSecurityStandard); nil checks nothing.
	PodSecurity *policy.PodSecurity
	// RestrictNodeName clears a host pod's nodeName unless RealNodes and
	// NodeVisible say the tenant sees that node (policies.isolation.nodeName,
	// policy.HostNodeName).
	RestrictNodeName bool
	// RealNodes is sync.fromHost.nodes.enabled: the virtual cluster shows
	// the host's real nodes.
	RealNodes bool
	// NodeVisible reports whether the virtual cluster shows host node
	// name; the syncer sets it for each pod. nil: none is.
	NodeVisible func(name string) bool
	// RestrictTolerations keeps only the tolerations policy.HostTolerations
	// allows (policies.isolation.tolerations).
	RestrictTolerations bool
	// VirtualScheduler is controlPlane.advanced.virtualScheduler.enabled:
	// the virtual cluster's scheduler binds pods, and a host pod is made
	// only for a bound virtual pod, on its node (VirtualScheduled).
	VirtualScheduler bool
	// HostAllocatable is the status.allocatable of host node name (nil
	// when it is not known); the syncer sets it for each pod. nil: none
	// is known.
	HostAllocatable func(name string) corev1.ResourceList
}

// WaitsForScheduler reports whether pod has no host pod yet because the
// virtual scheduler has not bound it to a node.
func (env Environment) WaitsForScheduler(pod *corev1.Pod) bool {
	return env.VirtualScheduler && pod.Spec.NodeName == ""
}

// virtualScheduled adapts the host spec of a pod the virtual scheduler
// bound (env.VirtualScheduler) to the host node it names, which the
// host's kubelet admits the pod to by the host node's own labels and
// resources: the node selector is only the enforced one and there is no
// node affinity (the virtual scheduler matched both against the labels
// of the virtual copy, which the tenant may have changed), and a
// container does not ask for an extended resource (a name with a domain,
// e.g. example.com/gpu) that the host node does not offer (the tenant
// added it to the virtual copy's status; the virtual scheduler counted
// it). The pod's other scheduling fields (tolerations, priority) stay.
func virtualScheduled(spec *corev1.PodSpec, env Environment) {
	spec.NodeSelector = NodeSelector(nil, env.EnforceNodeSelector)
	if spec.Affinity != nil {
		spec.Affinity.NodeAffinity = nil
	}
	env.hostResources(spec)
}

// hostResources drops from the containers of spec, a pod's bound to host
// node spec.nodeName, the extended resources the host node does not
// offer (HostResources); nothing when its allocatable is not known.
func (env Environment) hostResources(spec *corev1.PodSpec) {
	if env.HostAllocatable == nil || spec.NodeName == "" {
		return
	}
	allocatable := env.HostAllocatable(spec.NodeName)
	if allocatable == nil {
		return
	}
	forEachContainer(spec, func(c *corev1.Container) {
		c.Resources = HostResources(c.Resources, allocatable)
	})
}

// ResourcesForHost is virtual pod pod with the container resources its
// host pod gets: with the virtual scheduler, less the extended resources
// the host node does not offer (HostResources); else pod itself. pod is
// not modified.
func (env Environment) ResourcesForHost(pod *corev1.Pod) *corev1.Pod {
	if !env.VirtualScheduler {
		return pod
	}
	out := pod.DeepCopy()
	env.hostResources(&out.Spec)
	return out
}

// HostResources is r without the extended resources (names with a domain,
// such as example.com/foo; Kubernetes' own names have none, or the
// kubernetes.io domain) that allocatable, a host node's, does not list.
// r is not modified.
func HostResources(r corev1.ResourceRequirements, allocatable corev1.ResourceList) corev1.ResourceRequirements {
	drop := func(name corev1.ResourceName, _ resource.Quantity) bool {
		_, offered := allocatable[name]
		return nodes.IsExtended(name) && !offered
	}
	out := *r.DeepCopy()
	for _, list := range []*corev1.ResourceList{&out.Requests, &out.Limits} {
		maps.DeleteFunc(*list, drop)
		if len(*list) == 0 {
			*list = nil
		}
	}
	return out
}

// hostTolerations are the tolerations a host pod carries for the tenant's
// tolerations: those the isolation rule keeps (all of them when it is
// off), then the enforced ones.
func (env Environment) hostTolerations(tenant []corev1.Toleration) []corev1.Toleration {
	kept := tenant
	if env.RestrictTolerations {
		kept, _ = policy.HostTolerations(tenant, env.EnforceTolerations)
	}
	return append(slices.Clip(kept), env.EnforceTolerations...)
}

// DroppedTolerations are the tolerations of pod its host pod does not get
// (policies.isolation.tolerations); none when the rule is off.
func (env Environment) DroppedTolerations(pod *corev1.Pod) []corev1.Toleration {
	if !env.RestrictTolerations {
		return nil
	}
	_, dropped := policy.HostTolerations(pod.Spec.Tolerations, env.EnforceTolerations)
	return dropped
}

// hostPriorityClass is the host class of virtual class name: "" for none,
// for a system-* class (the host's system classes are the host's own
// components'), and when env.PriorityClass does not know it.
func (env Environment) hostPriorityClass(name string) string {
	if name == "" || strings.HasPrefix(name, priorityclasses.SystemPrefix) || env.PriorityClass == nil {
		return ""
	}
	return env.PriorityClass(name)
}

// HostPriorityClass is the host class a pod naming virtual class pc runs
// with: pc's own name when pc is a read-only copy of a host class
// (sync.fromHost.priorityClasses); the host copy
// vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER when the tenant's classes are
// synced (sync.toHost.priorityClasses); else "" (no class: the host's
// default priority).
func (env Environment) HostPriorityClass(pc *schedulingv1.PriorityClass) string {
	switch {
	case pc.Labels[fromhost.Label] == "true":
		return pc.Name
	case env.SyncPriorityClasses && priorityclasses.Synced(pc):
		return env.Translator.HostClusterScopedName(pc.Name)
	}
	return ""
}

// HostServiceAccountOf is the host ServiceAccount host copy of pod runs
// as: the host copy of its service account ("default" when unset) with
// SyncServiceAccounts, else HostServiceAccount.
func (env Environment) HostServiceAccountOf(pod *corev1.Pod) string {
	if !env.SyncServiceAccounts {
		return env.HostServiceAccount
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	return env.Translator.HostName(sa, pod.Namespace)
}

// Token is the service account tokens minted in the virtual cluster for a
// pod, one per audience its projected volumes ask for (TokenAudiences), and
// where the host pod reads them: host annotations (AnnotationFor), or,
// when Secret is set (sync.toHost.pods.useSecretsForSATokens), keys of host
// Secret Secret (KeyFor), which only the host pod's token volumes read
// (pod annotations are readable by anyone who may read host pods).
type Token struct {
	// Annotation is the host annotation of the token for the API server's
	// own audiences (a projection without audience, vCluster's
	// "vcluster.loft.sh/token-…"); AnnotationFor derives the others.
	Annotation string
	// Secret is the host Secret holding the tokens, "" for annotations.
	Secret string
	// Values maps an audience ("" for the API server's own) to its token.
	Values map[string]string
}

// AnnotationFor is the host annotation of the token for audience aud:
// Annotation for "", else Annotation-HASH (audienceSuffix).
func (t *Token) AnnotationFor(aud string) string {
	if aud == "" {
		return t.Annotation
	}
	return t.Annotation + "-" + audienceSuffix(aud)
}

// TokenKey is the key of a token Secret that holds the token for the API
// server's own audiences; KeyFor names the others.
const TokenKey = "token"

// KeyFor is the key of a token Secret that holds the token for audience
// aud: TokenKey for "", else TokenKey-HASH (audienceSuffix).
func KeyFor(aud string) string {
	if aud == "" {
		return TokenKey
	}
	return TokenKey + "-" + audienceSuffix(aud)
}

// audienceSuffix names audience aud in annotation and Secret keys: the
// first 10 hexadecimal digits of its SHA-256 (an audience may be any
// string, a key may not).
func audienceSuffix(aud string) string {
	sum := sha256.Sum256([]byte(aud))
	return hex.EncodeToString(sum[:5])
}

// TokenAudiences are the audiences the projected service account tokens
// of pod ask for, each once, in name order; "" stands for a projection
// without audience (the API server's own).
func TokenAudiences(pod *corev1.Pod) []string {
	var out []string
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil && !slices.Contains(out, s.ServiceAccountToken.Audience) {
				out = append(out, s.ServiceAccountToken.Audience)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TokenSecretName is the host Secret holding the token of the host pod
// hostPod: HOSTPOD-sa-token (shortened as host names are).
func TokenSecretName(hostPod string) string { return translate.SafeConcatName(hostPod, "sa-token") }

// References lists the objects a pod uses that are synced only while used:
// Secrets and ConfigMaps (volumes, projected sources, env, envFrom, image
// pull secrets) and PersistentVolumeClaims. The result is sorted and has no
// duplicates.
func References(pod *corev1.Pod) []mapping.Ref {
	set := map[mapping.Ref]struct{}{}
	add := func(kind, name string) {
		if name != "" {
			set[mapping.Ref{Kind: kind, Namespace: pod.Namespace, Name: name}] = struct{}{}
		}
	}
	for _, s := range pod.Spec.ImagePullSecrets {
		add("Secret", s.Name)
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			add("ConfigMap", v.ConfigMap.Name)
		case v.Secret != nil:
			add("Secret", v.Secret.SecretName)
		case v.PersistentVolumeClaim != nil:
			add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName)
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					add("ConfigMap", src.ConfigMap.Name)
				}
				if src.Secret != nil {
					add("Secret", src.Secret.Name)
				}
			}
		}
	}
	forEachContainer(&pod.Spec, func(c *corev1.Container) {
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add("ConfigMap", r.Name)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add("Secret", r.Name)
			}
		}
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				add("ConfigMap", e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				add("Secret", e.SecretRef.Name)
			}
		}
	})
	out := slices.Collect(maps.Keys(set))
	slices.SortFunc(out, func(a, b mapping.Ref) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// forEachContainer calls f on every init, regular and ephemeral container.
func forEachContainer(spec *corev1.PodSpec, f func(*corev1.Container)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		f(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		f((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

// HostSpec translates a virtual pod's spec for the host, following vCluster
// (https://github.com/loft-sh/vcluster/blob/main/pkg/controllers/resources/pods/translate/translator.go):
// every Secret, ConfigMap and PVC
// reference renamed; the host service account with automount and service
// links off; the service-account token volume fed from token's annotation;
// downward-API fields redirected to the pod's vcluster.loft.sh/ annotations;
// KUBERNETES_* env and hostAliases pointing at the virtual API server's
// host Service; with enableServiceLinks (the default), the variables of
// the virtual Services of the pod's namespace (ServiceEnv); ClusterFirst DNS pointed at the virtual kube-dns Service;
// the priority class the host's (HostPriorityClass), never a system
// class; StatefulSet pods get the
// rewriteHosts init container when env.RewriteHosts is set; the enforced
// tolerations and node selector are added; tolerations and nodeName are
// restricted by the isolation rules (RestrictTolerations,
// RestrictNodeName); a pod the virtual scheduler bound is adapted to its
// host node (virtualScheduled).
func HostSpec(pod *corev1.Pod, env Environment, token *Token) corev1.PodSpec {
	tr := env.Translator
	ns := pod.Namespace
	spec := *pod.Spec.DeepCopy()
	name := func(n string) string { return tr.HostName(n, ns) }

	spec.ServiceAccountName = env.HostServiceAccountOf(pod)
	spec.DeprecatedServiceAccount = spec.ServiceAccountName //nolint:staticcheck // kept equal, as the API server does
	spec.AutomountServiceAccountToken = ptr.To(false)
	spec.EnableServiceLinks = ptr.To(false)
	// The host's admission fills priority and preemption in from the class.
	spec.PriorityClassName, spec.Priority, spec.PreemptionPolicy = env.hostPriorityClass(pod.Spec.PriorityClassName), nil, nil
	if spec.Hostname == "" {
		spec.Hostname = hostnameOf(pod.Name)
	}
	if spec.Subdomain != "" {
		spec.Subdomain = name(spec.Subdomain)
	}
	for i := range spec.ImagePullSecrets {
		spec.ImagePullSecrets[i].Name = name(spec.ImagePullSecrets[i].Name)
	}
	for i := range spec.Volumes {
		translateVolume(&spec.Volumes[i], name, env, token)
		translateTrustBundles(&spec.Volumes[i], i, TrustBundleConfigMapName(tr.HostName(pod.Name, ns)))
		translatePodCertificates(&spec.Volumes[i], i, PodCertificateSecretName(tr.HostName(pod.Name, ns)))
	}
	var serviceEnv []corev1.EnvVar
	if env.Services != nil && (pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks) {
		serviceEnv = ServiceEnv(env.Services(ns))
	}
	forEachContainer(&spec, func(c *corev1.Container) {
		c.Env = withServiceEnv(c.Env, serviceEnv)
		if img, ok := env.TranslateImage[c.Image]; ok {
			c.Image = img
		}
		for j := range c.Env {
			translateEnvSource(c.Env[j].ValueFrom, name, tr)
		}
		for j := range c.EnvFrom {
			if r := c.EnvFrom[j].ConfigMapRef; r != nil {
				r.Name = name(r.Name)
			}
			if r := c.EnvFrom[j].SecretRef; r != nil {
				r.Name = name(r.Name)
			}
		}
		c.Env = withKubernetesEnv(c.Env, env.KubernetesIP)
	})
	if env.KubernetesIP != "" {
		spec.HostAliases = append(spec.HostAliases, corev1.HostAlias{IP: env.KubernetesIP, Hostnames: kubernetesHostnames(env.ClusterDomain)})
	}
	translateDNS(&spec, ns, env)
	addRewriteHosts(&spec, pod, env.RewriteHosts, env.ClusterDomain)
	spec.Tolerations = env.hostTolerations(spec.Tolerations)
	spec.NodeSelector = NodeSelector(spec.NodeSelector, env.EnforceNodeSelector)
	spec.NodeName = policy.HostNodeName(spec.NodeName, env.RestrictNodeName, env.RealNodes, env.NodeVisible)
	if env.VirtualScheduler && spec.NodeName != "" {
		virtualScheduled(&spec, env)
	}
	return spec
}

// NodeSelector is a host pod's node selector: the virtual pod's own
// (selector) with every label of enforced added, the enforced value
// winning over the pod's for the same key, so that a tenant's pod can
// narrow the host nodes it may run on but never leave those enforced.
// vCluster sets sync.fromHost.nodes.selector.labels as the node selector
// of every synced pod (its configuration reference, and
// pkg/controllers/resources/pods of github.com/loft-sh/vcluster). nil when
// both are empty; the inputs are not modified.
func NodeSelector(selector, enforced map[string]string) map[string]string {
	if len(selector) == 0 && len(enforced) == 0 {
		return selector
	}
	out := make(map[string]string, len(selector)+len(enforced))
	maps.Copy(out, selector)
	maps.Copy(out, enforced)
	return out
}

// hostnameOf makes a pod name (a DNS subdomain, dots allowed) into the DNS
// label spec.hostname must be: dots become dashes, cut to 63 characters.
func hostnameOf(name string) string {
	h := strings.ReplaceAll(name, ".", "-")
	if len(h) > 63 {
		h = h[:63]
	}
	return strings.TrimRight(h, "-")
}

func kubernetesHostnames(domain string) []string {
	return []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + domain}
}

// translateTrustBundles makes the ClusterTrustBundle sources of projected
// volume v (the i-th of the pod) read key TrustBundleKey of the host pod's
// trust-bundle ConfigMap configMap (see TrustBundleData).
func translateTrustBundles(v *corev1.Volume, i int, configMap string) {
	if v.Projected == nil {
		return
	}
	for j := range v.Projected.Sources {
		src := &v.Projected.Sources[j]
		if p := src.ClusterTrustBundle; p != nil {
			src.ClusterTrustBundle = nil
			src.ConfigMap = &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
				Items: []corev1.KeyToPath{{Key: TrustBundleKey(i, j), Path: p.Path}}, Optional: p.Optional}
		}
	}
}

func translateVolume(v *corev1.Volume, name func(string) string, env Environment, token *Token) {
	switch {
	case v.ConfigMap != nil:
		v.ConfigMap.Name = name(v.ConfigMap.Name)
	case v.Secret != nil:
		v.Secret.SecretName = name(v.Secret.SecretName)
	case v.PersistentVolumeClaim != nil:
		v.PersistentVolumeClaim.ClaimName = name(v.PersistentVolumeClaim.ClaimName)
	case v.DownwardAPI != nil:
		for i := range v.DownwardAPI.Items {
			translateFieldRef(v.DownwardAPI.Items[i].FieldRef, env.Translator)
		}
	case v.Projected != nil:
		for i := range v.Projected.Sources {
			src := &v.Projected.Sources[i]
			switch {
			case src.ConfigMap != nil:
				src.ConfigMap.Name = name(src.ConfigMap.Name)
			case src.Secret != nil:
				src.Secret.Name = name(src.Secret.Name)
			case src.DownwardAPI != nil:
				for j := range src.DownwardAPI.Items {
					translateFieldRef(src.DownwardAPI.Items[j].FieldRef, env.Translator)
				}
			case src.ServiceAccountToken != nil:
				path, aud := src.ServiceAccountToken.Path, src.ServiceAccountToken.Audience
				src.ServiceAccountToken = nil
				if token != nil && token.Secret != "" {
					src.Secret = &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: token.Secret},
						Items: []corev1.KeyToPath{{Key: KeyFor(aud), Path: path}}}
				} else if token != nil {
					src.DownwardAPI = &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
						Path:     path,
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: annotationPath(token.AnnotationFor(aud))},
					}}}
				} else {
					src.DownwardAPI = &corev1.DownwardAPIProjection{}
				}
			}
		}
	}
}

func translateEnvSource(src *corev1.EnvVarSource, name func(string) string, tr translate.Translator) {
	if src == nil {
		return
	}
	if r := src.ConfigMapKeyRef; r != nil {
		r.Name = name(r.Name)
	}
	if r := src.SecretKeyRef; r != nil {
		r.Name = name(r.Name)
	}
	translateFieldRef(src.FieldRef, tr)
}

func annotationPath(key string) string { return "metadata.annotations['" + key + "']" }

// translateFieldRef redirects downward-API fields whose host value differs
// from the virtual one to the pod annotations that carry the virtual value.
func translateFieldRef(f *corev1.ObjectFieldSelector, tr translate.Translator) {
	if f == nil {
		return
	}
	switch p := f.FieldPath; {
	case p == "metadata.name":
		f.FieldPath = annotationPath(translate.AnnotationPodName)
	case p == "metadata.namespace":
		f.FieldPath = annotationPath(translate.AnnotationPodNamespace)
	case p == "metadata.uid":
		f.FieldPath = annotationPath(translate.AnnotationPodUID)
	case p == "metadata.labels":
		f.FieldPath = annotationPath(translate.AnnotationPodLabels)
	case p == "spec.serviceAccountName":
		f.FieldPath = annotationPath(translate.AnnotationPodServiceAccountName)
	case strings.HasPrefix(p, "metadata.labels['") && strings.HasSuffix(p, "']"):
		key := strings.TrimSuffix(strings.TrimPrefix(p, "metadata.labels['"), "']")
		f.FieldPath = "metadata.labels['" + tr.HostLabelKey(key) + "']"
	}
}

// withKubernetesEnv sets the KUBERNETES_* variables a pod uses to find its
// API server to the virtual cluster's Service, overriding the host
// kubelet's, unless the container sets them itself.
func withKubernetesEnv(envs []corev1.EnvVar, ip string) []corev1.EnvVar {
	if ip == "" {
		return envs
	}
	want := []corev1.EnvVar{
		{Name: "KUBERNETES_SERVICE_HOST", Value: ip},
		{Name: "KUBERNETES_SERVICE_PORT", Value: "443"},
		{Name: "KUBERNETES_SERVICE_PORT_HTTPS", Value: "443"},
		{Name: "KUBERNETES_PORT", Value: "tcp://" + ip + ":443"},
		{Name: "KUBERNETES_PORT_443_TCP", Value: "tcp://" + ip + ":443"},
		{Name: "KUBERNETES_PORT_443_TCP_PROTO", Value: "tcp"},
		{Name: "KUBERNETES_PORT_443_TCP_ADDR", Value: ip},
		{Name: "KUBERNETES_PORT_443_TCP_PORT", Value: "443"},
	}
	for _, w := range want {
		if !slices.ContainsFunc(envs, func(e corev1.EnvVar) bool { return e.Name == w.Name }) {
			envs = append(envs, w)
		}
	}
	return envs
}

// translateDNS points ClusterFirst pods at the virtual cluster's DNS Service.
func translateDNS(spec *corev1.PodSpec, ns string, env Environment) {
	if env.DNSIP == "" {
		return
	}
	clusterFirst := (spec.DNSPolicy == "" || spec.DNSPolicy == corev1.DNSClusterFirst) && !spec.HostNetwork
	if !clusterFirst && spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		return
	}
	d := env.ClusterDomain
	cfg := &corev1.PodDNSConfig{
		Nameservers: []string{env.DNSIP},
		Searches:    []string{ns + ".svc." + d, "svc." + d, d},
		Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}},
	}
	if old := spec.DNSConfig; old != nil {
		cfg.Nameservers = append(cfg.Nameservers, old.Nameservers...)
		cfg.Searches = append(cfg.Searches, old.Searches...)
		for _, o := range old.Options {
			if o.Name == "ndots" {
				cfg.Options = cfg.Options[:0]
			}
		}
		cfg.Options = append(cfg.Options, old.Options...)
	}
	spec.DNSPolicy, spec.DNSConfig = corev1.DNSNone, cfg
}

// HostAnnotations are the pod annotations vCluster adds so the downward API
// of the host pod reads virtual values, the hash of its resources
// (translate.AnnotationPodResources), plus the token annotations, one per
// audience (none when the tokens are in a Secret).
func HostAnnotations(pod *corev1.Pod, token *Token) map[string]string {
	out := map[string]string{
		translate.AnnotationPodName:               pod.Name,
		translate.AnnotationPodNamespace:          pod.Namespace,
		translate.AnnotationPodUID:                string(pod.UID),
		translate.AnnotationPodLabels:             translate.LabelsAnnotation(pod.Labels),
		translate.AnnotationPodServiceAccountName: pod.Spec.ServiceAccountName,
		translate.AnnotationPodResources:          ResourcesHash(pod),
	}
	if len(pod.OwnerReferences) > 0 {
		data, _ := json.Marshal(pod.OwnerReferences)
		out[translate.AnnotationPodOwnerReferences] = string(data)
		for _, o := range pod.OwnerReferences {
			if o.Controller != nil && *o.Controller {
				out[translate.AnnotationPodOwnerSetKind] = o.Kind
			}
		}
	}
	if token != nil && token.Secret == "" {
		for aud, v := range token.Values {
			out[token.AnnotationFor(aud)] = v
		}
	}
	return out
}

// HostLabels adds to a host pod's labels one vcluster.loft.sh/ns-label-… label
// per label of the pod's virtual namespace, so host network policies can
// select by virtual namespace.
func HostLabels(labels map[string]string, tr translate.Translator, namespaceLabels map[string]string) map[string]string {
	out := make(map[string]string, len(labels)+len(namespaceLabels))
	maps.Copy(out, labels)
	for k, v := range namespaceLabels {
		out[tr.NamespaceLabelKey(k)] = v
	}
	return out
}

// TokenAnnotation finds the annotation of a host pod that holds the token
// for the API server's own audiences (Token.Annotation), not one of another
// audience (Token.AnnotationFor).
func TokenAnnotation(host map[string]string) (string, bool) {
	for k := range host {
		if rest, ok := strings.CutPrefix(k, translate.AnnotationPodTokenPrefix); ok && !strings.Contains(rest, "-") {
			return k, true
		}
	}
	return "", false
}

// NeedsToken reports whether a virtual pod mounts a service-account token.
func NeedsToken(pod *corev1.Pod) bool { return len(TokenAudiences(pod)) > 0 }
