package endpoints

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/policy"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

var testTr = translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}

func toJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

//nolint:staticcheck // Endpoints is the kind this syncer handles
func TestHostSubsets(t *testing.T) {
	ports := []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}
	v := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "team"},
		Subsets: []corev1.EndpointSubset{
			{
				Addresses: []corev1.EndpointAddress{
					{IP: "10.0.0.1", Hostname: "web-0", NodeName: ptr.To("node-1"),
						TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-0", Namespace: "team", UID: "uid-0", ResourceVersion: "5"}},
					{IP: "10.0.0.2", TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-1"}},
					{IP: "10.0.0.3"},
					{IP: "10.0.0.4", TargetRef: &corev1.ObjectReference{Kind: "Node", Name: "node-1", UID: "node-uid"}},
				},
				NotReadyAddresses: []corev1.EndpointAddress{
					{IP: "10.0.0.5", TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-2", Namespace: "other", UID: "uid-2"}},
				},
				Ports: ports,
			},
			{
				Addresses: []corev1.EndpointAddress{
					{IP: "10.0.1.1", TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-0", Namespace: "team", FieldPath: "spec.containers{db}"}},
				},
				Ports: []corev1.EndpointPort{{Name: "sql", Port: 5432, Protocol: corev1.ProtocolTCP}},
			},
		},
	}
	before := v.DeepCopy()
	want := []corev1.EndpointSubset{
		{
			Addresses: []corev1.EndpointAddress{
				{IP: "10.0.0.1", Hostname: "web-0", NodeName: ptr.To("node-1"),
					TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-0-x-team-x-vc", Namespace: "vc-host"}},
				{IP: "10.0.0.2", TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-1-x-team-x-vc", Namespace: "vc-host"}},
				{IP: "10.0.0.3"},
				{IP: "10.0.0.4", TargetRef: &corev1.ObjectReference{Kind: "Node", Name: "node-1", UID: "node-uid"}},
			},
			NotReadyAddresses: []corev1.EndpointAddress{
				{IP: "10.0.0.5", TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-2-x-other-x-vc", Namespace: "vc-host"}},
			},
			Ports: ports,
		},
		{
			Addresses: []corev1.EndpointAddress{
				{IP: "10.0.1.1", TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-0-x-team-x-vc", Namespace: "vc-host", FieldPath: "spec.containers{db}"}},
			},
			Ports: []corev1.EndpointPort{{Name: "sql", Port: 5432, Protocol: corev1.ProtocolTCP}},
		},
	}
	got := HostSubsets(v, testTr)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("HostSubsets() = %s\nwant %s", toJSON(got), toJSON(want))
	}
	if !reflect.DeepEqual(v, before) {
		t.Errorf("HostSubsets modified its input: %s", toJSON(v))
	}
}

//nolint:staticcheck // Endpoints is the kind this syncer handles
func TestHostSubsetsEmpty(t *testing.T) {
	for _, subsets := range [][]corev1.EndpointSubset{nil, {}} {
		got := HostSubsets(&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "team"}, Subsets: subsets}, testTr)
		if len(got) != 0 {
			t.Errorf("HostSubsets(%v) = %v, want none", subsets, got)
		}
	}
}

func TestRestrictSubsets(t *testing.T) {
	own := policy.PodIPSet([]string{"10.244.0.5", "10.244.0.6"})
	in := []corev1.EndpointSubset{ //nolint:staticcheck
		{Addresses: []corev1.EndpointAddress{{IP: "10.244.0.5"}, {IP: "10.0.0.1"}}, NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.244.0.6"}}}, //nolint:staticcheck
		{Addresses: []corev1.EndpointAddress{{IP: "192.168.1.1"}}},                                                                                   //nolint:staticcheck
	}
	before := toJSON(in)
	kept, refused := RestrictSubsets(in, own)
	want := []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.244.0.5"}}, NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.244.0.6"}}}} //nolint:staticcheck
	if !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %s, want %s", toJSON(kept), toJSON(want))
	}
	if !reflect.DeepEqual(refused, []string{"10.0.0.1", "192.168.1.1"}) {
		t.Errorf("refused %q", refused)
	}
	if toJSON(in) != before {
		t.Errorf("the input was modified: %s", toJSON(in))
	}
}
