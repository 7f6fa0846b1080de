package serviceaccounts

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func TestHostFields(t *testing.T) {
	tr := translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}
	v := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "team"},
		ImagePullSecrets:             []corev1.LocalObjectReference{{Name: "regcred"}},
		Secrets:                      []corev1.ObjectReference{{Name: "builder-token"}},
		AutomountServiceAccountToken: ptr.To(true)}
	h := &corev1.ServiceAccount{Secrets: []corev1.ObjectReference{{Name: "host-token"}}}
	HostFields(h, v, tr)
	if want := []corev1.LocalObjectReference{{Name: tr.HostName("regcred", "team")}}; !reflect.DeepEqual(h.ImagePullSecrets, want) {
		t.Errorf("image pull secrets %v, want %v", h.ImagePullSecrets, want)
	}
	if h.Secrets != nil || h.AutomountServiceAccountToken == nil || *h.AutomountServiceAccountToken {
		t.Errorf("secrets %v automount %v; want none and false", h.Secrets, h.AutomountServiceAccountToken)
	}
	if want := []mapping.Ref{{Kind: "Secret", Namespace: "team", Name: "regcred"}}; !reflect.DeepEqual(References(v), want) {
		t.Errorf("References = %v", References(v))
	}
	if v.ImagePullSecrets[0].Name != "regcred" {
		t.Error("HostFields changed the virtual account")
	}
}
