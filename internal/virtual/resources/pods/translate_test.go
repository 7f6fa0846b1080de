package pods

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

var testTr = translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}

// toJSON renders v for failure messages.
func toJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func cmRef(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }

func envCM(name, cm string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: cmRef(cm), Key: "k"}}}
}

func envSecret(name, secret string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: cmRef(secret), Key: "k"}}}
}

func envField(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
}

// referencePod uses every reference form References and HostSpec know, each
// with a name of its own so that a form that is missed shows in the result.
// cm-vol and sec-vol are referenced twice to check de-duplication.
func referencePod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "uid-web"},
		Spec: corev1.PodSpec{
			ServiceAccountName:           "app-sa",
			DeprecatedServiceAccount:     "app-sa",
			AutomountServiceAccountToken: ptr.To(true),
			EnableServiceLinks:           ptr.To(true),
			PriorityClassName:            "high",
			Priority:                     ptr.To(int32(1000)),
			PreemptionPolicy:             ptr.To(corev1.PreemptLowerPriority),
			Subdomain:                    "headless",
			ImagePullSecrets:             []corev1.LocalObjectReference{cmRef("pull"), cmRef("sec-vol")},
			Volumes: []corev1.Volume{
				{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef("cm-vol")}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec-vol"}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef("cm-proj")}},
					{Secret: &corev1.SecretProjection{LocalObjectReference: cmRef("sec-proj")}},
				}}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			InitContainers: []corev1.Container{{
				Name: "init", Image: "busybox:1",
				Env: []corev1.EnvVar{envCM("A", "cm-init"), envSecret("B", "sec-init")},
			}},
			Containers: []corev1.Container{{
				Name: "app", Image: "nginx:1.27",
				Env: []corev1.EnvVar{{Name: "PLAIN", Value: "x"}, envCM("C", "cm-vol"), envField("POD_IP", "status.podIP")},
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: cmRef("cm-envfrom")}},
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: cmRef("sec-envfrom")}},
				},
			}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox:1",
				Env:     []corev1.EnvVar{envSecret("D", "sec-eph")},
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: cmRef("cm-eph")}}},
			}}},
		},
	}
}

func TestReferences(t *testing.T) {
	ref := func(kind, name string) mapping.Ref { return mapping.Ref{Kind: kind, Namespace: "team", Name: name} }
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []mapping.Ref
	}{
		{
			name: "every reference form, sorted and de-duplicated",
			pod:  referencePod(),
			want: []mapping.Ref{
				ref("ConfigMap", "cm-envfrom"),
				ref("ConfigMap", "cm-eph"),
				ref("ConfigMap", "cm-init"),
				ref("ConfigMap", "cm-proj"),
				ref("ConfigMap", "cm-vol"),
				ref("PersistentVolumeClaim", "data"),
				ref("Secret", "pull"),
				ref("Secret", "sec-envfrom"),
				ref("Secret", "sec-eph"),
				ref("Secret", "sec-init"),
				ref("Secret", "sec-proj"),
				ref("Secret", "sec-vol"),
			},
		},
		{
			name: "empty pod",
			pod:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: "team"}},
			want: nil,
		},
		{
			name: "empty names are ignored",
			pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team"}, Spec: corev1.PodSpec{
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: ""}},
				Containers:       []corev1.Container{{Name: "c", Env: []corev1.EnvVar{envSecret("X", "")}}},
			}},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := References(tt.pod)
			if len(got) != len(tt.want) || (len(got) > 0 && !reflect.DeepEqual(got, tt.want)) {
				t.Errorf("References() = %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestHostSpecRenamesReferencesAndResetsIdentity(t *testing.T) {
	pod := referencePod()
	before := pod.DeepCopy()
	env := Environment{Translator: testTr, HostServiceAccount: "vc-workload", ClusterDomain: "cluster.local"}
	spec := HostSpec(pod, env, nil)
	if !reflect.DeepEqual(before, pod) {
		t.Fatalf("HostSpec modified its input pod:\nbefore %s\nafter %s", toJSON(before), toJSON(pod))
	}

	checks := []struct {
		field string
		got   any
		want  any
	}{
		{"imagePullSecrets", spec.ImagePullSecrets, []corev1.LocalObjectReference{cmRef("pull-x-team-x-vc"), cmRef("sec-vol-x-team-x-vc")}},
		{"volumes[cm].configMap.name", spec.Volumes[0].ConfigMap.Name, "cm-vol-x-team-x-vc"},
		{"volumes[sec].secret.secretName", spec.Volumes[1].Secret.SecretName, "sec-vol-x-team-x-vc"},
		{"volumes[data].persistentVolumeClaim.claimName", spec.Volumes[2].PersistentVolumeClaim.ClaimName, "data-x-team-x-vc"},
		{"volumes[proj].projected.sources[0].configMap.name", spec.Volumes[3].Projected.Sources[0].ConfigMap.Name, "cm-proj-x-team-x-vc"},
		{"volumes[proj].projected.sources[1].secret.name", spec.Volumes[3].Projected.Sources[1].Secret.Name, "sec-proj-x-team-x-vc"},
		{"volumes[scratch]", spec.Volumes[4], corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		{"initContainers[0].env", spec.InitContainers[0].Env, []corev1.EnvVar{envCM("A", "cm-init-x-team-x-vc"), envSecret("B", "sec-init-x-team-x-vc")}},
		{"containers[0].env", spec.Containers[0].Env, []corev1.EnvVar{{Name: "PLAIN", Value: "x"}, envCM("C", "cm-vol-x-team-x-vc"), envField("POD_IP", "status.podIP")}},
		{"containers[0].envFrom", spec.Containers[0].EnvFrom, []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: cmRef("cm-envfrom-x-team-x-vc")}},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: cmRef("sec-envfrom-x-team-x-vc")}},
		}},
		{"ephemeralContainers[0].env", spec.EphemeralContainers[0].Env, []corev1.EnvVar{envSecret("D", "sec-eph-x-team-x-vc")}},
		{"ephemeralContainers[0].envFrom", spec.EphemeralContainers[0].EnvFrom, []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: cmRef("cm-eph-x-team-x-vc")}},
		}},
		{"subdomain", spec.Subdomain, "headless-x-team-x-vc"},
		{"serviceAccountName", spec.ServiceAccountName, "vc-workload"},
		{"serviceAccount", spec.DeprecatedServiceAccount, "vc-workload"}, //nolint:staticcheck
		{"automountServiceAccountToken", spec.AutomountServiceAccountToken, ptr.To(false)},
		{"enableServiceLinks", spec.EnableServiceLinks, ptr.To(false)},
		{"priorityClassName", spec.PriorityClassName, ""},
		{"priority", spec.Priority, (*int32)(nil)},
		{"preemptionPolicy", spec.PreemptionPolicy, (*corev1.PreemptionPolicy)(nil)},
		{"hostname", spec.Hostname, "web"},
		// Without KubernetesIP and DNSIP nothing else is added.
		{"hostAliases", spec.HostAliases, []corev1.HostAlias(nil)},
		{"dnsPolicy", spec.DNSPolicy, corev1.DNSPolicy("")},
		{"dnsConfig", spec.DNSConfig, (*corev1.PodDNSConfig)(nil)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %s, want %s", c.field, toJSON(c.got), toJSON(c.want))
		}
	}
}

func TestHostSpecDoesNotModifyInputWithFullEnvironment(t *testing.T) {
	pod := referencePod()
	pod.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.1.1", Hostnames: []string{"db"}}}
	pod.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"example.com"}}
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}}
	pod.Spec.Volumes = append(pod.Spec.Volumes, tokenVolume())
	before := pod.DeepCopy()
	env := Environment{
		Translator: testTr, HostServiceAccount: "vc-workload", KubernetesIP: "10.96.0.10", DNSIP: "10.96.0.53",
		ClusterDomain: "cluster.local", TranslateImage: map[string]string{"nginx:1.27": "mirror/nginx:1.27"},
		EnforceTolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "tenants", Effect: corev1.TaintEffectNoSchedule}},
	}
	_ = HostSpec(pod, env, &Token{Annotation: "vcluster.loft.sh/token-abcdefgh", Values: map[string]string{"": "jwt"}})
	if !reflect.DeepEqual(before, pod) {
		t.Errorf("HostSpec modified its input pod:\nbefore %s\nafter %s", toJSON(before), toJSON(pod))
	}
}

func TestHostSpecHostname(t *testing.T) {
	tests := []struct {
		name, podName, hostname, want string
	}{
		{"defaulted to the pod name", "web-0", "", "web-0"},
		{"explicit hostname kept", "web-0", "custom", "custom"},
		{"63 characters kept", strings.Repeat("a", 63), "", strings.Repeat("a", 63)},
		{"64 characters truncated", strings.Repeat("c", 64), "", strings.Repeat("c", 63)},
		{"truncated without trailing dash", strings.Repeat("a", 62) + "-bcdef", "", strings.Repeat("a", 62)},
		{"truncated without trailing dot and dash", strings.Repeat("b", 61) + ".-tail", "", strings.Repeat("b", 61)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tt.podName, Namespace: "team"}, Spec: corev1.PodSpec{Hostname: tt.hostname}}
			got := HostSpec(pod, Environment{Translator: testTr}, nil).Hostname
			if got != tt.want {
				t.Errorf("Hostname = %q, want %q", got, tt.want)
			}
		})
	}
}

// A pod name is a DNS subdomain and may contain dots; spec.hostname must be a
// DNS-1123 label (k8s.io/kubernetes pkg/apis/core/validation, ValidatePodSpec).
func TestHostSpecHostnameOfDottedPodNameIsDNSLabel(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web.v1", Namespace: "team"}}
	got := HostSpec(pod, Environment{Translator: testTr}, nil).Hostname
	if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
		t.Errorf("Hostname = %q is not a valid DNS-1123 label: %v", got, errs)
	}
}

// tokenVolume is the projected volume the API server injects for the
// service-account token.
func tokenVolume() corev1.Volume {
	return corev1.Volume{Name: "kube-api-access-xxxx", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To(int32(420)),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(int64(3607))}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef("kube-root-ca.crt"), Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}}}
}

func TestHostSpecTokenVolume(t *testing.T) {
	rest := []corev1.VolumeProjection{
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef("kube-root-ca.crt-x-team-x-vc"), Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['vcluster.loft.sh/namespace']"}},
		}}},
	}
	tests := []struct {
		name  string
		token *Token
		first corev1.VolumeProjection
	}{
		{
			name:  "token read from its annotation",
			token: &Token{Annotation: "vcluster.loft.sh/token-abcdefgh", Values: map[string]string{"": "jwt"}},
			first: corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "token", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['vcluster.loft.sh/token-abcdefgh']"}},
			}}},
		},
		{
			name:  "token read from its Secret (useSecretsForSATokens)",
			token: &Token{Secret: "web-x-team-x-vc-sa-token", Values: map[string]string{"": "jwt"}},
			first: corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "web-x-team-x-vc-sa-token"},
				Items: []corev1.KeyToPath{{Key: TokenKey, Path: "token"}}}},
		},
		{
			name:  "nil token leaves an empty downwardAPI projection",
			token: nil,
			first: corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{tokenVolume()}}}
			got := HostSpec(pod, Environment{Translator: testTr, HostServiceAccount: "vc-workload"}, tt.token).Volumes
			want := []corev1.Volume{{Name: "kube-api-access-xxxx", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To(int32(420)),
				Sources:     append([]corev1.VolumeProjection{tt.first}, rest...),
			}}}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Volumes = %s\nwant %s", toJSON(got), toJSON(want))
			}
		})
	}
}

func TestNeedsToken(t *testing.T) {
	tests := []struct {
		name    string
		volumes []corev1.Volume
		want    bool
	}{
		{"injected token volume", []corev1.Volume{tokenVolume()}, true},
		{"no volumes", nil, false},
		{"projected without token", []corev1.Volume{{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef("c")}}},
		}}}}, false},
		{"secret volume", []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Volumes: tt.volumes}}
			if got := NeedsToken(pod); got != tt.want {
				t.Errorf("NeedsToken() = %v, want %v", got, tt.want)
			}
		})
	}
}

// Projected tokens of other audiences (a pod's own volume, as the OIDC
// discovery conformance spec mounts) read their own token: each audience
// has its annotation and its Secret key, named after its hash, and the
// host annotations carry every token.
func TestHostSpecTokenAudiences(t *testing.T) {
	vol := corev1.Volume{Name: "tokens", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "oidc", Audience: "oidc-discovery-test"}},
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "api"}},
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "oidc-again", Audience: "oidc-discovery-test"}},
	}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{vol}}}
	if got := TokenAudiences(pod); !reflect.DeepEqual(got, []string{"", "oidc-discovery-test"}) {
		t.Fatalf("TokenAudiences = %q", got)
	}
	values := map[string]string{"": "jwt-api", "oidc-discovery-test": "jwt-oidc"}
	suffix := audienceSuffix("oidc-discovery-test")
	if len(suffix) != 10 || suffix == audienceSuffix("other") {
		t.Errorf("audienceSuffix = %q", suffix)
	}

	annotations := &Token{Annotation: "vcluster.loft.sh/token-abcdefgh", Values: values}
	var paths []string
	for _, src := range HostSpec(pod, Environment{Translator: testTr}, annotations).Volumes[0].Projected.Sources {
		f := src.DownwardAPI.Items[0]
		paths = append(paths, f.Path+"="+f.FieldRef.FieldPath)
	}
	oidcPath := "metadata.annotations['vcluster.loft.sh/token-abcdefgh-" + suffix + "']"
	if want := []string{"oidc=" + oidcPath, "api=metadata.annotations['vcluster.loft.sh/token-abcdefgh']", "oidc-again=" + oidcPath}; !reflect.DeepEqual(paths, want) {
		t.Errorf("annotation paths:\n%q\nwant\n%q", paths, want)
	}
	anns := HostAnnotations(pod, annotations)
	if anns["vcluster.loft.sh/token-abcdefgh"] != "jwt-api" || anns["vcluster.loft.sh/token-abcdefgh-"+suffix] != "jwt-oidc" {
		t.Errorf("host annotations: %v", anns)
	}

	secret := &Token{Secret: "web-x-team-x-vc-sa-token", Values: values}
	var keys []string
	for _, src := range HostSpec(pod, Environment{Translator: testTr}, secret).Volumes[0].Projected.Sources {
		keys = append(keys, src.Secret.Items[0].Path+"="+src.Secret.Items[0].Key)
	}
	if want := []string{"oidc=token-" + suffix, "api=token", "oidc-again=token-" + suffix}; !reflect.DeepEqual(keys, want) {
		t.Errorf("secret keys: %q, want %q", keys, want)
	}
	if anns := HostAnnotations(pod, secret); len(anns) != len(HostAnnotations(pod, nil)) {
		t.Errorf("tokens in a Secret, yet annotations: %v", anns)
	}
}

func TestTokenAnnotation(t *testing.T) {
	tests := []struct {
		name   string
		anns   map[string]string
		want   string
		wantOK bool
	}{
		{"present", map[string]string{"vcluster.loft.sh/name": "web", "vcluster.loft.sh/token-abcdefgh": "jwt"}, "vcluster.loft.sh/token-abcdefgh", true},
		{"beside a token of another audience", map[string]string{"vcluster.loft.sh/token-abcdefgh-0123456789": "jwt2", "vcluster.loft.sh/token-abcdefgh": "jwt"},
			"vcluster.loft.sh/token-abcdefgh", true},
		{"only another audience's", map[string]string{"vcluster.loft.sh/token-abcdefgh-0123456789": "jwt2"}, "", false},
		{"absent", map[string]string{"vcluster.loft.sh/name": "web", "token": "x"}, "", false},
		{"nil", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := TokenAnnotation(tt.anns)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("TokenAnnotation() = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestHostSpecDownwardAPIFieldRefs(t *testing.T) {
	tests := []struct{ path, want string }{
		{"metadata.name", "metadata.annotations['vcluster.loft.sh/name']"},
		{"metadata.namespace", "metadata.annotations['vcluster.loft.sh/namespace']"},
		{"metadata.uid", "metadata.annotations['vcluster.loft.sh/uid']"},
		{"metadata.labels", "metadata.annotations['vcluster.loft.sh/labels']"},
		{"spec.serviceAccountName", "metadata.annotations['vcluster.loft.sh/service-account-name']"},
		{"metadata.labels['release']", "metadata.labels['vcluster.loft.sh/label-vc-x-a4d451ec23']"},
		{"metadata.labels['app']", "metadata.labels['app']"},
		{"metadata.annotations['note']", "metadata.annotations['note']"},
		{"status.podIP", "status.podIP"},
		{"spec.nodeName", "spec.nodeName"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			sel := func() *corev1.ObjectFieldSelector {
				return &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: tt.path}
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: corev1.PodSpec{
				Volumes: []corev1.Volume{
					{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
						Items: []corev1.DownwardAPIVolumeFile{{Path: "f", FieldRef: sel()}},
					}}},
					{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "f", FieldRef: sel()}}}},
					}}}},
				},
				InitContainers: []corev1.Container{{Name: "init", Env: []corev1.EnvVar{envField("F", tt.path)}}},
				Containers:     []corev1.Container{{Name: "app", Env: []corev1.EnvVar{envField("F", tt.path)}}},
			}}
			spec := HostSpec(pod, Environment{Translator: testTr}, nil)
			got := map[string]string{
				"env (init)":         spec.InitContainers[0].Env[0].ValueFrom.FieldRef.FieldPath,
				"env":                spec.Containers[0].Env[0].ValueFrom.FieldRef.FieldPath,
				"downwardAPI volume": spec.Volumes[0].DownwardAPI.Items[0].FieldRef.FieldPath,
				"projected volume":   spec.Volumes[1].Projected.Sources[0].DownwardAPI.Items[0].FieldRef.FieldPath,
			}
			for where, g := range got {
				if g != tt.want {
					t.Errorf("%s: fieldPath %q → %q, want %q", where, tt.path, g, tt.want)
				}
			}
		})
	}
}

func kubernetesEnv(ip string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "KUBERNETES_SERVICE_HOST", Value: ip},
		{Name: "KUBERNETES_SERVICE_PORT", Value: "443"},
		{Name: "KUBERNETES_SERVICE_PORT_HTTPS", Value: "443"},
		{Name: "KUBERNETES_PORT", Value: "tcp://" + ip + ":443"},
		{Name: "KUBERNETES_PORT_443_TCP", Value: "tcp://" + ip + ":443"},
		{Name: "KUBERNETES_PORT_443_TCP_PROTO", Value: "tcp"},
		{Name: "KUBERNETES_PORT_443_TCP_ADDR", Value: ip},
		{Name: "KUBERNETES_PORT_443_TCP_PORT", Value: "443"},
	}
}

func TestHostSpecKubernetesEnvAndHostAliases(t *testing.T) {
	newPod := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: corev1.PodSpec{
			HostAliases:    []corev1.HostAlias{{IP: "10.1.1.1", Hostnames: []string{"db"}}},
			InitContainers: []corev1.Container{{Name: "init"}},
			Containers: []corev1.Container{
				{Name: "app", Env: []corev1.EnvVar{{Name: "FOO", Value: "bar"}}},
				{Name: "own", Env: []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "my.apiserver"}}},
			},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}},
		}}
	}

	t.Run("with KubernetesIP", func(t *testing.T) {
		ip := "10.96.0.10"
		spec := HostSpec(newPod(), Environment{Translator: testTr, KubernetesIP: ip, ClusterDomain: "cluster.local"}, nil)
		checks := []struct {
			where string
			got   []corev1.EnvVar
			want  []corev1.EnvVar
		}{
			{"initContainers[init]", spec.InitContainers[0].Env, kubernetesEnv(ip)},
			{"containers[app]", spec.Containers[0].Env, append([]corev1.EnvVar{{Name: "FOO", Value: "bar"}}, kubernetesEnv(ip)...)},
			{"containers[own]", spec.Containers[1].Env, append([]corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "my.apiserver"}}, kubernetesEnv(ip)[1:]...)},
			{"ephemeralContainers[debug]", spec.EphemeralContainers[0].Env, kubernetesEnv(ip)},
		}
		for _, c := range checks {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s env = %s\nwant %s", c.where, toJSON(c.got), toJSON(c.want))
			}
		}
		wantAliases := []corev1.HostAlias{
			{IP: "10.1.1.1", Hostnames: []string{"db"}},
			{IP: ip, Hostnames: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}},
		}
		if !reflect.DeepEqual(spec.HostAliases, wantAliases) {
			t.Errorf("HostAliases = %s\nwant %s", toJSON(spec.HostAliases), toJSON(wantAliases))
		}
	})

	t.Run("without KubernetesIP", func(t *testing.T) {
		pod := newPod()
		spec := HostSpec(pod, Environment{Translator: testTr, ClusterDomain: "cluster.local"}, nil)
		if !reflect.DeepEqual(spec.InitContainers, pod.Spec.InitContainers) ||
			!reflect.DeepEqual(spec.Containers, pod.Spec.Containers) ||
			!reflect.DeepEqual(spec.EphemeralContainers, pod.Spec.EphemeralContainers) {
			t.Errorf("containers changed without KubernetesIP:\ngot %s\nwant %s", toJSON(spec.Containers), toJSON(pod.Spec.Containers))
		}
		if !reflect.DeepEqual(spec.HostAliases, pod.Spec.HostAliases) {
			t.Errorf("HostAliases = %s, want only the pod's own %s", toJSON(spec.HostAliases), toJSON(pod.Spec.HostAliases))
		}
	})
}

func TestHostSpecDNS(t *testing.T) {
	ours := func(extraNS, extraSearch []string, opts ...corev1.PodDNSConfigOption) *corev1.PodDNSConfig {
		if len(opts) == 0 {
			opts = []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}}
		}
		return &corev1.PodDNSConfig{
			Nameservers: append([]string{"10.96.0.53"}, extraNS...),
			Searches:    append([]string{"team.svc.cluster.local", "svc.cluster.local", "cluster.local"}, extraSearch...),
			Options:     opts,
		}
	}
	userCfg := func() *corev1.PodDNSConfig {
		return &corev1.PodDNSConfig{
			Nameservers: []string{"1.1.1.1"},
			Searches:    []string{"example.com"},
			Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}},
		}
	}
	tests := []struct {
		name        string
		dnsIP       string
		policy      corev1.DNSPolicy
		hostNetwork bool
		cfg         *corev1.PodDNSConfig
		wantPolicy  corev1.DNSPolicy
		wantCfg     *corev1.PodDNSConfig
	}{
		{name: "empty policy", dnsIP: "10.96.0.53", policy: "", wantPolicy: corev1.DNSNone, wantCfg: ours(nil, nil)},
		{name: "ClusterFirst", dnsIP: "10.96.0.53", policy: corev1.DNSClusterFirst, wantPolicy: corev1.DNSNone, wantCfg: ours(nil, nil)},
		{name: "Default unchanged", dnsIP: "10.96.0.53", policy: corev1.DNSDefault, wantPolicy: corev1.DNSDefault},
		{
			name: "None unchanged", dnsIP: "10.96.0.53", policy: corev1.DNSNone, cfg: userCfg(),
			wantPolicy: corev1.DNSNone, wantCfg: userCfg(),
		},
		{name: "ClusterFirst with hostNetwork unchanged", dnsIP: "10.96.0.53", policy: corev1.DNSClusterFirst, hostNetwork: true, wantPolicy: corev1.DNSClusterFirst},
		{name: "ClusterFirstWithHostNet with hostNetwork", dnsIP: "10.96.0.53", policy: corev1.DNSClusterFirstWithHostNet, hostNetwork: true, wantPolicy: corev1.DNSNone, wantCfg: ours(nil, nil)},
		{name: "ClusterFirstWithHostNet without hostNetwork", dnsIP: "10.96.0.53", policy: corev1.DNSClusterFirstWithHostNet, wantPolicy: corev1.DNSNone, wantCfg: ours(nil, nil)},
		{
			name: "existing dnsConfig appended, its ndots replaces ours", dnsIP: "10.96.0.53", policy: corev1.DNSClusterFirst, cfg: userCfg(),
			wantPolicy: corev1.DNSNone,
			wantCfg: ours([]string{"1.1.1.1"}, []string{"example.com"},
				corev1.PodDNSConfigOption{Name: "ndots", Value: ptr.To("2")}, corev1.PodDNSConfigOption{Name: "edns0"}),
		},
		{
			name: "existing dnsConfig without ndots keeps ours", dnsIP: "10.96.0.53", policy: corev1.DNSClusterFirst,
			cfg:        &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "edns0"}}},
			wantPolicy: corev1.DNSNone,
			wantCfg:    ours(nil, nil, corev1.PodDNSConfigOption{Name: "ndots", Value: ptr.To("5")}, corev1.PodDNSConfigOption{Name: "edns0"}),
		},
		{name: "no DNSIP unchanged", dnsIP: "", policy: corev1.DNSClusterFirst, wantPolicy: corev1.DNSClusterFirst},
		{name: "no DNSIP, empty policy unchanged", dnsIP: "", policy: "", wantPolicy: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: corev1.PodSpec{
				DNSPolicy: tt.policy, HostNetwork: tt.hostNetwork, DNSConfig: tt.cfg,
			}}
			spec := HostSpec(pod, Environment{Translator: testTr, DNSIP: tt.dnsIP, ClusterDomain: "cluster.local"}, nil)
			if spec.DNSPolicy != tt.wantPolicy {
				t.Errorf("DNSPolicy = %q, want %q", spec.DNSPolicy, tt.wantPolicy)
			}
			if !reflect.DeepEqual(spec.DNSConfig, tt.wantCfg) {
				t.Errorf("DNSConfig = %s\nwant %s", toJSON(spec.DNSConfig), toJSON(tt.wantCfg))
			}
		})
	}
}

func TestHostSpecTranslateImageAndEnforceTolerations(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Image: "nginx:1.27"}},
		Containers:     []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "cache", Image: "redis:7"}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debug", Image: "nginx:1.27",
		}}},
		Tolerations: []corev1.Toleration{{Key: "own", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
	}}
	enforced := []corev1.Toleration{
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "tenants", Effect: corev1.TaintEffectNoSchedule},
		{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule},
	}
	env := Environment{Translator: testTr, TranslateImage: map[string]string{"nginx:1.27": "mirror/nginx:1.27"}, EnforceTolerations: enforced}
	spec := HostSpec(pod, env, nil)
	images := map[string]string{
		"initContainers[init]":       spec.InitContainers[0].Image,
		"containers[app]":            spec.Containers[0].Image,
		"containers[cache]":          spec.Containers[1].Image,
		"ephemeralContainers[debug]": spec.EphemeralContainers[0].Image,
	}
	wantImages := map[string]string{
		"initContainers[init]":       "mirror/nginx:1.27",
		"containers[app]":            "mirror/nginx:1.27",
		"containers[cache]":          "redis:7",
		"ephemeralContainers[debug]": "mirror/nginx:1.27",
	}
	if !maps.Equal(images, wantImages) {
		t.Errorf("images = %v, want %v", images, wantImages)
	}
	wantTol := append([]corev1.Toleration{{Key: "own", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, enforced...)
	if !reflect.DeepEqual(spec.Tolerations, wantTol) {
		t.Errorf("Tolerations = %s\nwant %s", toJSON(spec.Tolerations), toJSON(wantTol))
	}
	if len(env.EnforceTolerations) != 2 || len(pod.Spec.Tolerations) != 1 {
		t.Errorf("inputs changed: EnforceTolerations %v, pod tolerations %v", env.EnforceTolerations, pod.Spec.Tolerations)
	}
}

// The isolation rules on a pod's node and tolerations
// (policies.isolation.nodeName and .tolerations).
func TestHostSpecIsolation(t *testing.T) {
	own := corev1.Toleration{Key: "own", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	notReady := corev1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	enforced := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "tenants", Effect: corev1.TaintEffectNoSchedule}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: corev1.PodSpec{
		NodeName: "worker-1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}},
		Tolerations: []corev1.Toleration{own, notReady, enforced}}}
	visible := func(n string) bool { return n == "worker-1" }
	tests := []struct {
		name     string
		env      Environment
		wantNode string
		wantTol  []corev1.Toleration
		dropped  []corev1.Toleration
	}{
		{"rules off", Environment{EnforceTolerations: []corev1.Toleration{enforced}}, "worker-1",
			[]corev1.Toleration{own, notReady, enforced, enforced}, nil},
		{"rules on, fake nodes", Environment{EnforceTolerations: []corev1.Toleration{enforced}, RestrictNodeName: true, RestrictTolerations: true, NodeVisible: visible},
			"", []corev1.Toleration{notReady, enforced, enforced}, []corev1.Toleration{own}},
		{"rules on, real nodes, the node visible", Environment{RestrictNodeName: true, RealNodes: true, NodeVisible: visible, RestrictTolerations: true},
			"worker-1", []corev1.Toleration{notReady}, []corev1.Toleration{own, enforced}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.env.Translator = testTr
			spec := HostSpec(pod, tt.env, nil)
			if spec.NodeName != tt.wantNode {
				t.Errorf("nodeName %q, want %q", spec.NodeName, tt.wantNode)
			}
			if !reflect.DeepEqual(spec.Tolerations, tt.wantTol) {
				t.Errorf("tolerations %s\nwant %s", toJSON(spec.Tolerations), toJSON(tt.wantTol))
			}
			if got := tt.env.DroppedTolerations(pod); !reflect.DeepEqual(got, tt.dropped) {
				t.Errorf("DroppedTolerations %s, want %s", toJSON(got), toJSON(tt.dropped))
			}
		})
	}
	if len(pod.Spec.Tolerations) != 3 || pod.Spec.NodeName != "worker-1" {
		t.Errorf("the pod was modified: %+v", pod.Spec)
	}
}

func TestHostAnnotations(t *testing.T) {
	owners := []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc", UID: "rs-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)},
		{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg", UID: "cm-uid"},
	}
	ownersJSON := `[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-abc","uid":"rs-uid","controller":true,"blockOwnerDeletion":true},` +
		`{"apiVersion":"v1","kind":"ConfigMap","name":"cfg","uid":"cm-uid"}]`
	base := map[string]string{
		"vcluster.loft.sh/name":                 "web",
		"vcluster.loft.sh/namespace":            "team",
		"vcluster.loft.sh/uid":                  "uid-web",
		"vcluster.loft.sh/labels":               "app=\"web\"\ntier=\"front end\"",
		"vcluster.loft.sh/service-account-name": "app-sa",
		"clustersync.io/resources":              ResourcesHash(&corev1.Pod{}),
	}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name   string
		owners []metav1.OwnerReference
		token  *Token
		want   map[string]string
	}{
		{name: "no owners, no token", want: base},
		{
			name: "owners with a controller", owners: owners,
			want: with("vcluster.loft.sh/owner-references", ownersJSON, "vcluster.loft.sh/owner-set-kind", "ReplicaSet"),
		},
		{
			name: "owners without a controller", owners: owners[1:],
			want: with("vcluster.loft.sh/owner-references", `[{"apiVersion":"v1","kind":"ConfigMap","name":"cfg","uid":"cm-uid"}]`),
		},
		{
			name: "token", token: &Token{Annotation: "vcluster.loft.sh/token-abcdefgh", Values: map[string]string{"": "jwt"}},
			want: with("vcluster.loft.sh/token-abcdefgh", "jwt"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web", Namespace: "team", UID: "uid-web",
					Labels:          map[string]string{"tier": "front end", "app": "web"},
					OwnerReferences: tt.owners,
				},
				Spec: corev1.PodSpec{ServiceAccountName: "app-sa"},
			}
			got := HostAnnotations(pod, tt.token)
			if !maps.Equal(got, tt.want) {
				t.Errorf("HostAnnotations() = %s\nwant %s", toJSON(got), toJSON(tt.want))
			}
		})
	}
}

func sha10(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:10]
}

func TestHostLabels(t *testing.T) {
	in := map[string]string{"vcluster.loft.sh/managed-by": "vc", "app": "web"}
	inBefore := maps.Clone(in)
	nsLabels := map[string]string{"kubernetes.io/metadata.name": "team", "env": "prod"}
	got := HostLabels(in, testTr, nsLabels)
	want := map[string]string{
		"vcluster.loft.sh/managed-by": "vc",
		"app":                         "web",
		"vcluster.loft.sh/ns-label-vc-x-" + sha10("kubernetes.io/metadata.name"): "team",
		"vcluster.loft.sh/ns-label-vc-x-" + sha10("env"):                         "prod",
	}
	if !maps.Equal(got, want) {
		t.Errorf("HostLabels() = %s\nwant %s", toJSON(got), toJSON(want))
	}
	if !maps.Equal(in, inBefore) {
		t.Errorf("HostLabels modified its input: %v, was %v", in, inBefore)
	}
	if got := HostLabels(in, testTr, nil); !maps.Equal(got, inBefore) {
		t.Errorf("HostLabels(no namespace labels) = %v, want %v", got, inBefore)
	}
}

// HostLabels(nil, …) is not reached by the syncer today (host labels always
// carry managed-by), but the exported function panics on it.
func TestHostLabelsNilLabels(t *testing.T) {
	got := HostLabels(nil, testTr, map[string]string{"env": "prod"})
	want := map[string]string{"vcluster.loft.sh/ns-label-vc-x-" + sha10("env"): "prod"}
	if !maps.Equal(got, want) {
		t.Errorf("HostLabels(nil) = %v, want %v", got, want)
	}
}

func TestSyncSpec(t *testing.T) {
	notReady := corev1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))}
	enforced := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "tenants", Effect: corev1.TaintEffectNoSchedule}
	gpu := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	gates := func(names ...string) []corev1.PodSchedulingGate {
		out := make([]corev1.PodSchedulingGate, len(names))
		for i, n := range names {
			out[i] = corev1.PodSchedulingGate{Name: n}
		}
		return out
	}
	h := corev1.PodSpec{
		InitContainers:  []corev1.Container{{Name: "init", Image: "alpine:3"}},
		Containers:      []corev1.Container{{Name: "app", Image: "mirror/nginx:1.26"}, {Name: "side", Image: "busybox:1"}, {Name: "extra", Image: "keep:1"}},
		Tolerations:     []corev1.Toleration{enforced, notReady},
		SchedulingGates: gates("a", "b", "c"),
	}
	v := corev1.PodSpec{
		InitContainers:        []corev1.Container{{Name: "init", Image: "alpine:4"}},
		Containers:            []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "side", Image: "busybox:2"}},
		ActiveDeadlineSeconds: ptr.To(int64(600)),
		Tolerations:           []corev1.Toleration{notReady, gpu},
		SchedulingGates:       gates("a", "c"),
	}
	vBefore := *v.DeepCopy()
	syncSpec(&h, &v, Environment{Translator: testTr, TranslateImage: map[string]string{"nginx:1.27": "mirror/nginx:1.27"}})

	want := corev1.PodSpec{
		InitContainers:        []corev1.Container{{Name: "init", Image: "alpine:4"}},
		Containers:            []corev1.Container{{Name: "app", Image: "mirror/nginx:1.27"}, {Name: "side", Image: "busybox:2"}, {Name: "extra", Image: "keep:1"}},
		ActiveDeadlineSeconds: ptr.To(int64(600)),
		Tolerations:           []corev1.Toleration{enforced, notReady, gpu},
		SchedulingGates:       gates("a", "c"),
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("host spec = %s\nwant %s", toJSON(h), toJSON(want))
	}
	if !reflect.DeepEqual(v, vBefore) {
		t.Errorf("syncSpec modified the virtual spec: %s", toJSON(v))
	}

	// A second sync changes nothing: tolerations are not duplicated.
	syncSpec(&h, &v, Environment{Translator: testTr, TranslateImage: map[string]string{"nginx:1.27": "mirror/nginx:1.27"}})
	if !reflect.DeepEqual(h, want) {
		t.Errorf("second sync: host spec = %s\nwant %s", toJSON(h), toJSON(want))
	}
}

func TestVirtualStatus(t *testing.T) {
	host := &corev1.PodStatus{
		Phase:             corev1.PodRunning,
		HostIP:            "192.168.1.10",
		PodIP:             "10.244.1.5",
		PodIPs:            []corev1.PodIP{{IP: "10.244.1.5"}},
		QOSClass:          corev1.PodQOSBestEffort,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, RestartCount: 2, Image: "mirror/nginx:1.27"}},
	}
	hostBefore := host.DeepCopy()
	disruption := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}
	virtual := &corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable, Message: "old",
		// Ready is the host's to say; DisruptionTarget, which the
		// virtual API server's eviction set, stays.
		// PodResizeInProgress is the kubelet's: gone from the host pod,
		// it goes.
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}, disruption,
			{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue}}}
	got := VirtualStatus(host, virtual)
	want := *hostBefore.DeepCopy()
	want.QOSClass = corev1.PodQOSBurstable
	want.Conditions = append(want.Conditions, disruption)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("VirtualStatus() = %s\nwant %s", toJSON(got), toJSON(want))
	}
	got.ContainerStatuses[0].Ready = false
	got.PodIPs[0].IP = "changed"
	if !reflect.DeepEqual(host, hostBefore) {
		t.Errorf("VirtualStatus result shares memory with the host status: %s", toJSON(host))
	}
}

func TestHostServiceAccountOf(t *testing.T) {
	shared := Environment{Translator: testTr, HostServiceAccount: "vc-workload"}
	own := shared
	own.SyncServiceAccounts = true
	withSA := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team"}, Spec: corev1.PodSpec{ServiceAccountName: "builder"}}
	without := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team"}}
	for _, tt := range []struct {
		env  Environment
		pod  *corev1.Pod
		want string
	}{
		{shared, withSA, "vc-workload"},
		{own, withSA, testTr.HostName("builder", "team")},
		{own, without, testTr.HostName("default", "team")},
	} {
		if got := tt.env.HostServiceAccountOf(tt.pod); got != tt.want {
			t.Errorf("sync %v, pod account %q: host account %q, want %q", tt.env.SyncServiceAccounts, tt.pod.Spec.ServiceAccountName, got, tt.want)
		}
		if got := HostSpec(tt.pod, tt.env, nil); got.ServiceAccountName != tt.want || got.AutomountServiceAccountToken == nil || *got.AutomountServiceAccountToken {
			t.Errorf("HostSpec: account %q automount %v", got.ServiceAccountName, got.AutomountServiceAccountToken)
		}
	}
}

func TestHostAnnotationsToken(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	if got := HostAnnotations(pod, &Token{Annotation: "vcluster.loft.sh/token-abcdefgh", Values: map[string]string{"": "jwt"}}); got["vcluster.loft.sh/token-abcdefgh"] != "jwt" {
		t.Errorf("an annotation token is not in the annotations: %v", got)
	}
	for k, v := range HostAnnotations(pod, &Token{Annotation: "vcluster.loft.sh/token-abcdefgh", Secret: "s", Values: map[string]string{"": "jwt"}}) {
		if v == "jwt" {
			t.Errorf("a Secret token leaks into annotation %s", k)
		}
	}
	if got := TokenSecretName("web-x-team-x-vc"); got != "web-x-team-x-vc-sa-token" {
		t.Errorf("TokenSecretName = %q", got)
	}
}

func TestNodeSelector(t *testing.T) {
	tests := []struct {
		name               string
		selector, enforced map[string]string
		want               map[string]string
	}{
		{"neither", nil, nil, nil},
		{"the pod's own only", map[string]string{"disk": "ssd"}, nil, map[string]string{"disk": "ssd"}},
		{"enforced only", nil, map[string]string{"pool": "tenants"}, map[string]string{"pool": "tenants"}},
		{"merged", map[string]string{"disk": "ssd"}, map[string]string{"pool": "tenants"}, map[string]string{"disk": "ssd", "pool": "tenants"}},
		{"the enforced value wins", map[string]string{"pool": "infra", "disk": "ssd"}, map[string]string{"pool": "tenants"},
			map[string]string{"disk": "ssd", "pool": "tenants"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, enf := maps.Clone(tt.selector), maps.Clone(tt.enforced)
			got := NodeSelector(tt.selector, tt.enforced)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NodeSelector = %v, want %v", got, tt.want)
			}
			if !maps.Equal(sel, tt.selector) || !maps.Equal(enf, tt.enforced) {
				t.Error("NodeSelector modified its inputs")
			}
		})
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"pool": "infra"}, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	spec := HostSpec(pod, Environment{Translator: translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}, ClusterDomain: "cluster.local",
		EnforceNodeSelector: map[string]string{"pool": "tenants"}}, nil)
	if want := map[string]string{"pool": "tenants"}; !maps.Equal(spec.NodeSelector, want) || pod.Spec.NodeSelector["pool"] != "infra" {
		t.Errorf("HostSpec node selector = %v, want %v (virtual pod's left as is: %v)", spec.NodeSelector, want, pod.Spec.NodeSelector)
	}
}

func TestHostPriorityClass(t *testing.T) {
	tr := translate.Translator{VCluster: "vc", HostNamespace: "host-ns"}
	classes := map[string]*schedulingv1.PriorityClass{
		"team":     {ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		"host-low": {ObjectMeta: metav1.ObjectMeta{Name: "host-low", Labels: map[string]string{fromhost.Label: "true"}}},
		"system-x": {ObjectMeta: metav1.ObjectMeta{Name: "system-x"}},
	}
	for _, tc := range []struct {
		sync        bool
		class, want string
	}{
		{true, "team", tr.HostClusterScopedName("team")},
		{false, "team", ""},
		{true, "host-low", "host-low"},
		{false, "host-low", "host-low"},
		{true, "system-node-critical", ""},
		{true, "system-x", ""},
		{true, "missing", ""},
		{true, "", ""},
	} {
		env := Environment{Translator: tr, SyncPriorityClasses: tc.sync}
		env.PriorityClass = func(name string) string {
			if pc, ok := classes[name]; ok {
				return env.HostPriorityClass(pc)
			}
			return ""
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
			Spec: corev1.PodSpec{PriorityClassName: tc.class, Priority: ptr.To(int32(7))}}
		spec := HostSpec(p, env, nil)
		if spec.PriorityClassName != tc.want || spec.Priority != nil {
			t.Errorf("sync %v, class %q: host class %q priority %v; want %q and no priority", tc.sync, tc.class, spec.PriorityClassName, spec.Priority, tc.want)
		}
	}
}

// A pod the virtual scheduler bound goes to its host node as the host's
// kubelet admits it: the node named, no node selector or node affinity of
// the tenant's (matched against the virtual copy's labels), no extended
// resource the host node lacks; the enforced selector, pod affinity and
// tolerations stay.
func TestHostSpecVirtualScheduler(t *testing.T) {
	foo := corev1.ResourceName("scheduling.k8s.io/foo")
	gpu := corev1.ResourceName("nvidia.com/gpu")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team"}, Spec: corev1.PodSpec{
		NodeName:     "node1",
		NodeSelector: map[string]string{"e2e": "42"},
		Affinity: &corev1.Affinity{
			NodeAffinity:    &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}},
			PodAntiAffinity: &corev1.PodAntiAffinity{},
		},
		Tolerations: []corev1.Toleration{{Key: "e2e", Operator: corev1.TolerationOpExists}},
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), foo: resource.MustParse("2"), gpu: resource.MustParse("1")},
			Limits:   corev1.ResourceList{foo: resource.MustParse("2"), gpu: resource.MustParse("1")},
		}}},
	}}
	before := pod.DeepCopy()
	env := Environment{Translator: testTr, VirtualScheduler: true, RealNodes: true,
		EnforceNodeSelector: map[string]string{"pool": "tenants"},
		HostAllocatable: func(name string) corev1.ResourceList {
			if name != "node1" {
				return nil
			}
			return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), gpu: resource.MustParse("4")}
		}}
	spec := HostSpec(pod, env, nil)
	if spec.NodeName != "node1" {
		t.Errorf("nodeName %q, want node1", spec.NodeName)
	}
	if !reflect.DeepEqual(spec.NodeSelector, map[string]string{"pool": "tenants"}) {
		t.Errorf("node selector %v, want only the enforced one", spec.NodeSelector)
	}
	if spec.Affinity == nil || spec.Affinity.NodeAffinity != nil || spec.Affinity.PodAntiAffinity == nil {
		t.Errorf("affinity %+v, want the pod anti-affinity without node affinity", spec.Affinity)
	}
	if len(spec.Tolerations) != 1 {
		t.Errorf("tolerations %v, want the tenant's", spec.Tolerations)
	}
	r := spec.Containers[0].Resources
	if _, ok := r.Requests[foo]; ok {
		t.Errorf("requests %v keep %s, which the host node lacks", r.Requests, foo)
	}
	if _, ok := r.Limits[foo]; ok {
		t.Errorf("limits %v keep %s", r.Limits, foo)
	}
	if r.Requests.Cpu().String() != "100m" || r.Requests.Name(gpu, resource.DecimalSI).String() != "1" || r.Limits.Name(gpu, resource.DecimalSI).String() != "1" {
		t.Errorf("resources %v, want cpu and the host's %s kept", r, gpu)
	}
	if !reflect.DeepEqual(pod, before) {
		t.Errorf("HostSpec modified the virtual pod")
	}
	if got := env.ResourcesForHost(pod).Spec.Containers[0].Resources; !reflect.DeepEqual(got, r) {
		t.Errorf("ResourcesForHost = %v, want HostSpec's %v", got, r)
	}

	// Without the virtual scheduler, the host's scheduler reads the
	// tenant's selector and affinity.
	env.VirtualScheduler = false
	plain := HostSpec(pod, env, nil)
	if plain.NodeSelector["e2e"] != "42" || plain.Affinity.NodeAffinity == nil || len(plain.Containers[0].Resources.Requests) != 3 {
		t.Errorf("without the virtual scheduler the spec changed: %+v", plain)
	}
	if env.WaitsForScheduler(&corev1.Pod{}) {
		t.Error("WaitsForScheduler without the virtual scheduler")
	}
	env.VirtualScheduler = true
	if !env.WaitsForScheduler(&corev1.Pod{}) || env.WaitsForScheduler(pod) {
		t.Error("WaitsForScheduler: want true for an unbound pod, false for a bound one")
	}
}

// A deleted pod whose host pod is gone ends Failed, its running
// containers terminated, as the kubelet ends it; a pod that already ended
// stays as it is.
func TestTerminatedStatus(t *testing.T) {
	now := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-time.Minute))
	running := &corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "a", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}},
			{Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
		}}
	before := running.DeepCopy()
	got, changed := TerminatedStatus(running, now)
	if !changed || got.Phase != corev1.PodFailed {
		t.Fatalf("phase %s (changed %v), want Failed", got.Phase, changed)
	}
	a := got.ContainerStatuses[0]
	if a.Ready || a.State.Terminated == nil || a.State.Terminated.ExitCode != 137 || a.State.Terminated.StartedAt != started {
		t.Errorf("running container %+v, want terminated (137) since its start", a)
	}
	if got.ContainerStatuses[1].State.Terminated.Reason != "Completed" {
		t.Errorf("a terminated container changed: %+v", got.ContainerStatuses[1])
	}
	if got.Conditions[0].Status != corev1.ConditionFalse || got.Conditions[1].Status != corev1.ConditionTrue {
		t.Errorf("conditions %+v, want Ready False and DisruptionTarget kept", got.Conditions)
	}
	if !reflect.DeepEqual(running, before) {
		t.Error("TerminatedStatus modified its input")
	}
	for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
		if _, changed := TerminatedStatus(&corev1.PodStatus{Phase: phase}, now); changed {
			t.Errorf("%s: changed", phase)
		}
	}
}
