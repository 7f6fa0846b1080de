package services

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

func TestReplicaService(t *testing.T) {
	from := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{
		ClusterIP: "10.96.0.9", Selector: map[string]string{"app": "web"},
		Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30080, Protocol: corev1.ProtocolTCP}}}}
	labels := map[string]string{LabelReplicatedBy: "a"}
	to := types.NamespacedName{Namespace: "shared", Name: "team-web"}
	for _, tt := range []struct {
		name      string
		headless  bool
		clusterIP string
	}{{"with a cluster IP of its own", false, ""}, {"headless", true, corev1.ClusterIPNone}} {
		got := ReplicaService(from, to, tt.headless, labels)
		if got.Name != "team-web" || got.Namespace != "shared" || got.Spec.ClusterIP != tt.clusterIP || len(got.Spec.Selector) != 0 ||
			len(got.Spec.Ports) != 1 || got.Spec.Ports[0].NodePort != 0 || got.Spec.Ports[0].Port != 80 ||
			got.Annotations[AnnotationReplicatedFrom] != "default/web" || got.Labels[LabelReplicatedBy] != "a" {
			t.Errorf("%s: %+v", tt.name, got)
		}
		got.Labels["x"] = "y"
		if labels["x"] != "" {
			t.Errorf("%s: the replica shares its labels map with the caller", tt.name)
		}
	}
}

func TestStaleReplicas(t *testing.T) {
	entries := Replications("networking.replicateServices.toHost", []config.ServiceMapping{{From: "default/web", To: "shared/team-web"}})
	replica := func(ns, name, from string) corev1.Service {
		return corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{AnnotationReplicatedFrom: from}}}
	}
	list := []corev1.Service{
		replica("shared", "team-web", "default/web"),   // kept
		replica("shared", "team-web2", "default/web"),  // no entry of that name
		replica("shared", "team-web", "default/other"), // the entry stands for another Service now
		replica("other", "team-web", "default/web"),    // another namespace
	}
	var got []string
	for _, s := range StaleReplicas(list, entries) {
		got = append(got, s.Namespace+"/"+s.Name+"<-"+s.Annotations[AnnotationReplicatedFrom])
	}
	want := []string{"shared/team-web2<-default/web", "shared/team-web<-default/other", "other/team-web<-default/web"}
	if !slices.Equal(got, want) {
		t.Errorf("StaleReplicas: %v, want %v", got, want)
	}
	if n := len(StaleReplicas(list, nil)); n != len(list) {
		t.Errorf("without entries %d stale, want every one", n)
	}
}

func TestSliceName(t *testing.T) {
	long := strings.Repeat("s", 63)
	if a, b := sliceName(long, "x"), sliceName(long, "y"); len(a) != 63 || a == b {
		t.Errorf("slice names of a 63-character Service: %q, %q", a, b)
	}
	if sliceName("web", "web-1") != sliceName("web", "web-1") {
		t.Error("slice names are not stable")
	}
}
