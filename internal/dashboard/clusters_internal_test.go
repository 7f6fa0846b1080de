package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/gke"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// A Cluster's row: its driver from its config, its pools from the
// upstream spec, the conditions that do not hold with Conflict first.
func TestSummarize(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "g", CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Minute))},
		Spec: mgmtv1.ClusterSpec{GKEConfig: &gkev1.GKEClusterConfigSpec{}},
		Status: mgmtv1.ClusterStatus{Phase: mgmtv1.PhaseUpdating, Version: "1.31.5-gke.1", GKEStatus: &mgmtv1.GKEStatus{
			UpstreamSpec: &gkev1.GKEClusterConfigSpec{NodePools: &[]gkev1.GKENodePoolConfig{{Name: "a"}, {Name: "b"}}}},
			Conditions: []metav1.Condition{
				{Type: mgmtv1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Waiting", Message: "waiting on Updated"},
				{Type: mgmtv1.ConditionConnected, Status: metav1.ConditionTrue, Reason: "Connected"},
				{Type: mgmtv1.ConditionConflict, Status: metav1.ConditionTrue, Reason: "ChangedOnBothSides", Message: "labels"},
			}}}
	v, ok := management.ViewOf(gke.Traits(), c)
	r := summarize(c, v, ok, now)
	want := []string{"Conflict: labels", "Ready: waiting on Updated"}
	if r.Driver != "GKE" || !r.Hosted || r.Pools != 2 || !r.Conflict || !slices.Equal(r.Problems, want) || r.Age != "90m" {
		t.Errorf("row %+v; want GKE, hosted, 2 pools, Conflict, problems %q, age 90m", r, want)
	}
	reg := summarize(&mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: mgmtv1.ClusterSpec{ImportedConfig: &mgmtv1.ImportedConfig{}}}, nil, false, now)
	if reg.Driver != mgmtv1.DriverImported || reg.Hosted || reg.Link != "/clusters/"+reg.Name || reg.Pools != -1 {
		t.Errorf("registered row %+v", reg)
	}
}

// A virtual cluster's row: its state from the control plane StatefulSet
// and pod (deploy.Status), its page, the reason it is not Running.
func TestSummarizeVirtual(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	sts := func(replicas int32) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "vc-demo", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "syncer", Image: "ghcr.io/clustersync/clustersync:v0.4.0"}}}}}}
	}
	ready := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	crashing := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "syncer",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}}
	for _, tc := range []struct {
		name     string
		sts      *appsv1.StatefulSet
		pod      *corev1.Pod
		phase    string
		problems []string
	}{
		{"running", sts(1), ready, "Running", nil},
		{"paused", sts(0), nil, "Paused", nil},
		{"crashing", sts(1), crashing, "Failed", []string{"Failed: syncer: CrashLoopBackOff"}},
		{"no pod yet", sts(1), nil, "Pending", []string{"Pending: no control plane pod yet"}},
	} {
		r := summarizeVirtual(tc.sts, tc.pod, now)
		if r.Phase != tc.phase || !slices.Equal(r.Problems, tc.problems) || r.Key() != "vc-demo/demo" || r.Link != "/virtual/vc-demo/demo" ||
			r.Driver != DriverVirtual || r.Version != "v0.4.0" || r.Age != "60m" {
			t.Errorf("%s: row %+v; want phase %s, problems %q, /virtual/vc-demo/demo, v0.4.0, 60m", tc.name, r, tc.phase, tc.problems)
		}
	}
}

// Filtering matches name, namespace, driver or phase; rows in Conflict come first
// whatever the sort.
func TestFilterSort(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	rows := []clusterRow{
		{Name: "b", Driver: "EKS", Phase: "Active", created: t0},
		{Name: "a", Driver: "GKE", Phase: "Updating", created: t0.Add(time.Minute)},
		{Name: "c", Driver: "AKS", Phase: "Active", Conflict: true, created: t0.Add(2 * time.Minute)},
		{Name: "d", Driver: "imported", Phase: "Pending", created: t0.Add(-time.Minute)},
		{Name: "a", Namespace: "vc-a", Driver: "virtual", Phase: "Running", created: t0.Add(3 * time.Minute)},
	}
	names := func(rs []clusterRow) (out []string) {
		for _, r := range rs {
			out = append(out, r.Key())
		}
		return out
	}
	for _, tc := range []struct {
		q, key string
		want   []string
	}{
		{"", "", []string{"c", "a", "vc-a/a", "b", "d"}},
		{"", "driver", []string{"c", "b", "a", "d", "vc-a/a"}},
		{"", "age", []string{"c", "d", "b", "a", "vc-a/a"}},
		{"active", "name", []string{"c", "b"}},
		{"gke", "", []string{"a"}},
		{"VC-A", "", []string{"vc-a/a"}},
		{"zzz", "", nil},
	} {
		if got := names(filterSort(rows, tc.q, tc.key)); !slices.Equal(got, tc.want) {
			t.Errorf("q %q sort %q: %v, want %v", tc.q, tc.key, got, tc.want)
		}
	}
}

// The paths a Cluster's keep-config annotation answers: only conflicts
// with exactly the recorded values.
func TestKeepingOf(t *testing.T) {
	conflicts := []hostedv1.FieldConflict{
		{Path: "tags", Config: `{"team":"user"}`, Upstream: `{"team":"console"}`},
		{Path: "nodeGroups[workers].desiredSize", Config: `1`, Upstream: `4`},
	}
	for _, tt := range []struct {
		name, annotation string
		want             map[string]bool
	}{
		{"none", "", nil},
		{"tags", `{"tags":{"config":{"team":"user"},"upstream":{"team":"console"}}}`, map[string]bool{"tags": true}},
		{"a stale answer", `{"nodeGroups[workers].desiredSize":{"config":1,"upstream":3}}`, nil},
		{"both", `{"tags":{"config":{"team":"user"},"upstream":{"team":"console"}},"nodeGroups[workers].desiredSize":{"config":1,"upstream":4}}`,
			map[string]bool{"tags": true, "nodeGroups[workers].desiredSize": true}},
		{"not JSON", `keep`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := map[string]string{}
			if tt.annotation != "" {
				a[engine.KeepAnnotation] = tt.annotation
			}
			if got := keeping(a, conflicts); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("keeping = %v, want %v", got, tt.want)
			}
		})
	}
}

// The HTTP status of a refused answer.
func TestKeepAnswerStatus(t *testing.T) {
	gr := schema.GroupResource{Group: "management.clustersync.io", Resource: "clusters"}
	for _, tt := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("cluster a: %w on %q (any more)", management.ErrNoConflict, "tags"), http.StatusConflict},
		{fmt.Errorf("cluster a: %w", management.ErrNotHosted), http.StatusBadRequest},
		{fmt.Errorf("cluster a: %w", apierrors.NewNotFound(gr, "a")), http.StatusNotFound},
		{fmt.Errorf("cluster a: %w", apierrors.NewForbidden(gr, "a", errors.New("RBAC"))), http.StatusForbidden},
		{fmt.Errorf("cluster a: %w", apierrors.NewConflict(gr, "a", errors.New("changed"))), http.StatusConflict},
		{errors.New("spec.eksConfig.nope: managed: no field"), http.StatusBadRequest},
	} {
		if got := answerStatus(tt.err); got != tt.want {
			t.Errorf("answerStatus(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
