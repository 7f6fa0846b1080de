package translate

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHostLabelKey(t *testing.T) {
	tr := Translator{VCluster: "vc", HostNamespace: "vc-host"}
	tests := []struct{ key, want string }{
		// Observed on vCluster 0.37 (ConvertLabelKeyWithPrefix,
		// https://github.com/loft-sh/vcluster/blob/main/pkg/util/translate/single_namespace.go).
		{"release", "vcluster.loft.sh/label-vc-x-a4d451ec23"},
		{"app", "app"},
		{"app.kubernetes.io/name", "app.kubernetes.io/name"},
		{LabelManagedBy, "vcluster.loft.sh/label-vc-x-" + hash10(LabelManagedBy)},
		{LabelNamespace, "vcluster.loft.sh/label-vc-x-" + hash10(LabelNamespace)},
		{LabelControlledBy, "vcluster.loft.sh/label-vc-x-" + hash10(LabelControlledBy)},
		// Keys of the syncer's own host key space, found by FuzzLabels: kept
		// verbatim, a tenant label forged the rewritten key of release and
		// a namespace label of its pod's namespace (host network policies
		// select by those), and neither read back.
		{"vcluster.loft.sh/label-vc-x-a4d451ec23", "tenant.vcluster.loft.sh/label-vc-x-a4d451ec23"},
		{"vcluster.loft.sh/ns-label-vc-x-" + hash10("team"), "tenant.vcluster.loft.sh/ns-label-vc-x-" + hash10("team")},
		{"tenant.vcluster.loft.sh/label-a", "tenant.tenant.vcluster.loft.sh/label-a"},
		{"tenant.vcluster.loft.sh/app", "tenant.tenant.vcluster.loft.sh/app"},
		{"vcluster.loft.sh/fake-node", "vcluster.loft.sh/fake-node"},
		{"tenant.example.com/app", "tenant.example.com/app"},
	}
	for _, tt := range tests {
		got := tr.HostLabelKey(tt.key)
		if got != tt.want {
			t.Errorf("HostLabelKey(%q) = %q, want %q", tt.key, got, tt.want)
		}
		back, ok := tr.VirtualLabelKey(got)
		if !ok || back != tt.key {
			t.Errorf("VirtualLabelKey(%q) = %q, %v; want %q, true", got, back, ok, tt.key)
		}
	}
	// Escaped, the prefix would be longer than 253 characters: hashed.
	long := strings.Repeat("tenant.", 33) + "vcluster.loft.sh/a"
	if got := tr.HostLabelKey(long); !strings.HasPrefix(got, LabelPrefixRewritten+"vc-x-") {
		t.Errorf("HostLabelKey(%q) = %q, want a rewritten key", long, got)
	}
	for _, hostOnly := range []string{LabelManagedBy, LabelNamespace, tr.NamespaceLabelKey("team"), "vcluster.loft.sh/label-other-x-0123456789"} {
		if k, ok := tr.VirtualLabelKey(hostOnly); ok {
			t.Errorf("VirtualLabelKey(%q) = %q, true; want a host-only key", hostOnly, k)
		}
	}
}

func TestHostLabelsRoundTrip(t *testing.T) {
	tr := Translator{VCluster: "vc", HostNamespace: "vc-host"}
	virtual := map[string]string{"app": "web", "release": "r1", LabelManagedBy: "forged"}
	host := tr.HostLabels(virtual, "team-a")
	want := map[string]string{
		"app":                                    "web",
		"vcluster.loft.sh/label-vc-x-a4d451ec23": "r1",
		"vcluster.loft.sh/label-vc-x-" + hash10(LabelManagedBy): "forged",
		LabelManagedBy: "vc",
		LabelNamespace: "team-a",
	}
	if !maps.Equal(host, want) {
		t.Fatalf("HostLabels = %v, want %v", host, want)
	}
	if back := tr.VirtualLabels(host); !maps.Equal(back, virtual) {
		t.Fatalf("VirtualLabels(HostLabels(x)) = %v, want %v", back, virtual)
	}
	if sel := tr.HostSelector(nil, "team-a"); sel != nil {
		t.Fatalf("HostSelector(nil) = %v, want nil", sel)
	}
}

func TestLabelsAnnotation(t *testing.T) {
	got := LabelsAnnotation(map[string]string{"b": "2", "a": `x"y`})
	want := "a=\"x\\\"y\"\nb=\"2\""
	if got != want {
		t.Fatalf("LabelsAnnotation = %q, want %q", got, want)
	}
	if LabelsAnnotation(nil) != "" {
		t.Fatal("LabelsAnnotation(nil) is not empty")
	}
}

func TestHostLabelSelector(t *testing.T) {
	tr := Translator{VCluster: "vc", HostNamespace: "vc-host"}
	own := map[string]string{LabelManagedBy: "vc", LabelNamespace: "team"}
	with := func(extra map[string]string) map[string]string {
		out := maps.Clone(own)
		maps.Copy(out, extra)
		return out
	}
	tests := []struct {
		name string
		in   *metav1.LabelSelector
		want *metav1.LabelSelector
	}{
		{name: "nil selects no pod", in: nil, want: nil},
		{name: "empty: every pod of the virtual namespace", in: &metav1.LabelSelector{}, want: &metav1.LabelSelector{MatchLabels: own}},
		{
			name: "labels and expressions, a reserved key rewritten",
			in: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "release": "r1"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
					{Key: LabelManagedBy, Operator: metav1.LabelSelectorOpExists}}},
			want: &metav1.LabelSelector{MatchLabels: with(map[string]string{"app": "web", tr.HostLabelKey("release"): "r1"}),
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
					{Key: tr.HostLabelKey(LabelManagedBy), Operator: metav1.LabelSelectorOpExists}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *metav1.LabelSelector
			if tt.in != nil {
				before = tt.in.DeepCopy()
			}
			got := tr.HostLabelSelector(tt.in, "team")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("HostLabelSelector:\n got %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.in, before) {
				t.Error("the virtual selector was changed")
			}
		})
	}
}
