package management_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Tests of issue 8: no change is lost when edits come fast or cross a
// console change. EKS updates take a minute (the emulator's UpdateDelay on
// the world's clock); a pass is one management and one operator reconcile.

// everyField registers an imported cluster whose config manages every
// updatable field: version, endpoint access, public access sources, tags,
// logging, and node group workers' scaling and labels.
func everyField(t *testing.T, name string) *world {
	t.Helper()
	return importedWith(t, ekstest.ClusterSpec{Name: name, Version: "1.31", EndpointPublicAccess: true,
		PublicAccessCIDRs: []string{"0.0.0.0/0"}, EnabledLogTypes: []string{"api"}, Tags: map[string]string{"team": "a"},
		Nodegroups: []ekstest.NodegroupSpec{{Name: "workers", MinSize: 1, MaxSize: 6, DesiredSize: 2, Labels: map[string]string{"tier": "web"}}}},
		func(s *eksv1.EKSClusterConfigSpec) {
			f, tr, v := false, true, "1.31"
			s.KubernetesVersion, s.PrivateAccess, s.PublicAccess = &v, &f, &tr
			s.PublicAccessSources, s.LoggingTypes = &[]string{"0.0.0.0/0"}, &[]string{"api"}
			s.Tags = &map[string]string{"team": "a"}
			mn, mx, d := int64(1), int64(6), int64(2)
			s.NodeGroups = &[]eksv1.NodeGroup{{NodegroupName: "workers", MinSize: &mn, MaxSize: &mx, DesiredSize: &d,
				Labels: &map[string]string{"tier": "web"}}}
		}, nil)
}

// pass runs the management controller, then the operator, once, without
// moving the clock.
func (w *world) pass(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := w.mgmt.Reconcile(ctx, ctrl.Request{NamespacedName: w.key}); err != nil {
		t.Fatalf("management: %v", err)
	}
	w.opPass(t)
}

// opPass runs the operator once; a failure it records in status is not an
// error of the pass.
func (w *world) opPass(t *testing.T) {
	t.Helper()
	_, err := w.op.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: eksv1.Namespace, Name: w.key.Name}})
	if err != nil && w.operator(t).Status.FailureMessage == "" {
		t.Fatalf("operator: %v", err)
	}
}

func (w *world) operator(t *testing.T) eksv1.EKSClusterConfig {
	t.Helper()
	var op eksv1.EKSClusterConfig
	if err := k.Get(context.Background(), types.NamespacedName{Namespace: eksv1.Namespace, Name: w.key.Name}, &op); err != nil {
		t.Fatal(err)
	}
	return op
}

// valueAt renders the value at path of s as JSON.
func valueAt(t *testing.T, s *eksv1.EKSClusterConfigSpec, path string) string {
	t.Helper()
	if s == nil {
		return "<no spec>"
	}
	v, err := managed.Value(*s, path, eks.ManagedOptions())
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// outsideChanges returns the notes of the OutsideChange events of the
// world's Cluster (hostedtest.EventNotes).
func (w *world) outsideChanges(t *testing.T) []string {
	t.Helper()
	c := w.cluster(t)
	return hostedtest.EventNotes(t, kube, recorder, &c, "OutsideChange")
}

func clusterCondition(c mgmtv1.Cluster, typ string) *metav1.Condition {
	return meta.FindStatusCondition(c.Status.Conditions, typ)
}

// The same field edited three times within one EKS update's duration, for
// every updatable field: EKS ends with the last value, which the config
// keeps (no OutsideChange, no Conflict) and the applied spec records.
func TestRapidEdits(t *testing.T) {
	str := func(s string) *string { return &s }
	i64 := func(n int64) *int64 { return &n }
	b := func(v bool) *bool { return &v }
	ng := func(s *eksv1.EKSClusterConfigSpec) *eksv1.NodeGroup { return &(*s.NodeGroups)[0] }
	for i, tc := range []struct {
		name, path string
		edits      []func(*eksv1.EKSClusterConfigSpec)
		want       string // the last value, as JSON
		inEKS      func(ekstest.ClusterSnapshot) any
	}{
		{"desiredSize 2→3→2 (the issue's report)", "nodeGroups[workers].desiredSize", []func(*eksv1.EKSClusterConfigSpec){
			func(s *eksv1.EKSClusterConfigSpec) { ng(s).DesiredSize = i64(3) },
			func(s *eksv1.EKSClusterConfigSpec) { ng(s).DesiredSize = i64(2) },
		}, `2`, func(c ekstest.ClusterSnapshot) any { return c.Nodegroups["workers"].DesiredSize }},
		{"desiredSize 3, 4, 5", "nodeGroups[workers].desiredSize", []func(*eksv1.EKSClusterConfigSpec){
			func(s *eksv1.EKSClusterConfigSpec) { ng(s).DesiredSize = i64(3) },
			func(s *eksv1.EKSClusterConfigSpec) { ng(s).DesiredSize = i64(4) },
			func(s *eksv1.EKSClusterConfigSpec) { ng(s).DesiredSize = i64(5) },
		}, `5`, func(c ekstest.ClusterSnapshot) any { return c.Nodegroups["workers"].DesiredSize }},
		{"labels", "nodeGroups[workers].labels", []func(*eksv1.EKSClusterConfigSpec){
			func(s *eksv1.EKSClusterConfigSpec) { ng(s).Labels = &map[string]string{"tier": "api"} },
			func(s *eksv1.EKSClusterConfigSpec) { ng(s).Labels = &map[string]string{"tier": "db"} },
			func(s *eksv1.EKSClusterConfigSpec) { ng(s).Labels = &map[string]string{"tier": "db", "zone": "b"} },
		}, `{"tier":"db","zone":"b"}`, func(c ekstest.ClusterSnapshot) any { return c.Nodegroups["workers"].Labels }},
		{"tags", "tags", []func(*eksv1.EKSClusterConfigSpec){
			func(s *eksv1.EKSClusterConfigSpec) { s.Tags = &map[string]string{"team": "b"} },
			func(s *eksv1.EKSClusterConfigSpec) { s.Tags = &map[string]string{"team": "c"} },
			func(s *eksv1.EKSClusterConfigSpec) { s.Tags = &map[string]string{"team": "d", "cost": "42"} },
		}, `{"cost":"42","team":"d"}`, func(c ekstest.ClusterSnapshot) any { return c.Tags }},
		{"version", "kubernetesVersion", []func(*eksv1.EKSClusterConfigSpec){
			func(s *eksv1.EKSClusterConfigSpec) { s.KubernetesVersion = str("1.32") },
			func(s *eksv1.EKSClusterConfigSpec) { s.KubernetesVersion = str("1.33") },
		}, `"1.33"`, func(c ekstest.ClusterSnapshot) any { return c.Version }},
		{"endpoint access on, then off again", "privateAccess", []func(*eksv1.EKSClusterConfigSpec){
			func(s *eksv1.EKSClusterConfigSpec) { s.PrivateAccess = b(true) },
			func(s *eksv1.EKSClusterConfigSpec) { s.PrivateAccess = b(false) },
		}, `false`, func(c ekstest.ClusterSnapshot) any { return c.EndpointPrivateAccess }},
		{"public access sources", "publicAccessSources", []func(*eksv1.EKSClusterConfigSpec){
			func(s *eksv1.EKSClusterConfigSpec) { s.PublicAccessSources = &[]string{"10.0.0.0/8"} },
			func(s *eksv1.EKSClusterConfigSpec) { s.PublicAccessSources = &[]string{"10.1.0.0/16"} },
			func(s *eksv1.EKSClusterConfigSpec) { s.PublicAccessSources = &[]string{"10.2.0.0/16"} },
		}, `["10.2.0.0/16"]`, func(c ekstest.ClusterSnapshot) any { return c.PublicAccessCIDRs }},
		{"logging", "loggingTypes", []func(*eksv1.EKSClusterConfigSpec){
			func(s *eksv1.EKSClusterConfigSpec) { s.LoggingTypes = &[]string{"api", "audit"} },
			func(s *eksv1.EKSClusterConfigSpec) { s.LoggingTypes = &[]string{"audit"} },
			func(s *eksv1.EKSClusterConfigSpec) { s.LoggingTypes = &[]string{"scheduler"} },
		}, `["scheduler"]`, func(c ekstest.ClusterSnapshot) any { return c.EnabledLogTypes }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := everyField(t, fmt.Sprintf("rapid-%d", i))
			for _, edit := range tc.edits {
				w.editConfig(t, edit)
				w.pass(t)
				w.clk.Advance(10 * time.Second) // the update pushed by the first edit is still InProgress
			}
			w.settle(t)

			snap, _ := w.srv.Cluster(w.key.Name)
			got, err := managed.Render(tc.inEKS(snap))
			if err != nil {
				t.Fatal(err)
			}
			if !managed.SameValue(got, []byte(tc.want)) && !(string(got) == "null" && tc.want == "[]") {
				t.Errorf("EKS has %s, want the last edit %s", got, tc.want)
			}
			c, op := w.cluster(t), w.operator(t)
			if v := valueAt(t, c.Spec.EKSConfig, tc.path); !managed.SameValue([]byte(v), []byte(tc.want)) {
				t.Errorf("spec.eksConfig %s = %s, want the user's last value %s", tc.path, v, tc.want)
			}
			if v := valueAt(t, op.Status.AppliedSpec, tc.path); !managed.SameValue([]byte(v), []byte(tc.want)) {
				t.Errorf("operator's applied %s = %s, want %s", tc.path, v, tc.want)
			}
			if v := valueAt(t, c.Status.EKSStatus.AppliedSpec, tc.path); !managed.SameValue([]byte(v), []byte(tc.want)) {
				t.Errorf("Cluster status.appliedSpec %s = %s, want %s", tc.path, v, tc.want)
			}
			if cond := clusterCondition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionFalse {
				t.Errorf("Conflict = %+v", cond)
			}
			if op.Status.FailureMessage != "" || len(op.Status.PendingUpdates) != 0 || op.Status.Phase != eksv1.PhaseActive {
				t.Errorf("operator status: phase %s failure %q pending %+v", op.Status.Phase, op.Status.FailureMessage, op.Status.PendingUpdates)
			}
			if notes := w.outsideChanges(t); len(notes) != 0 {
				t.Errorf("clustersync's own pushes reported as outside changes: %q", notes)
			}
		})
	}
}

// The console changes a field, and the user changes the same field before
// anything refreshed: the operator, deciding on what EKS reports when it
// would push, writes nothing to it and reports Conflict naming the field
// with the three values. The user's next edit of the field answers the
// conflict and is pushed.
func TestConsoleThenUserSameField(t *testing.T) {
	for i, tc := range []struct {
		name, path string
		console    func(*testing.T, *world)
		user, fix  func(*eksv1.EKSClusterConfigSpec)
		writes     string // the EKS operation that writes the field
		values     string // the Conflict message's values
		inEKS      func(ekstest.ClusterSnapshot) any
		before     any // EKS after the console change
		after      any // EKS after the user's answer
	}{
		{"node group scaled in the console while the user scales it", "nodeGroups[workers].desiredSize",
			func(t *testing.T, w *world) {
				if _, err := w.srv.ConsoleScaleNodegroup(w.key.Name, "workers", 4); err != nil { // InProgress for a minute
					t.Fatal(err)
				}
			},
			func(s *eksv1.EKSClusterConfigSpec) { n := int64(1); (*s.NodeGroups)[0].DesiredSize = &n },
			func(s *eksv1.EKSClusterConfigSpec) { n := int64(3); (*s.NodeGroups)[0].DesiredSize = &n },
			"UpdateNodegroupConfig", "(config 1, upstream 4, last applied 2)",
			func(c ekstest.ClusterSnapshot) any { return c.Nodegroups["workers"].DesiredSize }, int32(4), int32(3)},
		{"tags replaced in the console while the user edits them", "tags",
			func(t *testing.T, w *world) {
				if err := w.srv.ConsoleSetTags(arnOf(t, w.srv, w.key.Name), map[string]string{"team": "console"}); err != nil {
					t.Fatal(err)
				}
			},
			func(s *eksv1.EKSClusterConfigSpec) { s.Tags = &map[string]string{"team": "clustersync"} },
			func(s *eksv1.EKSClusterConfigSpec) { s.Tags = &map[string]string{"team": "agreed"} },
			"TagResource", `(config {"team":"clustersync"}, upstream {"team":"console"}, last applied {"team":"a"})`,
			func(c ekstest.ClusterSnapshot) any { return c.Tags["team"] }, "console", "agreed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := everyField(t, fmt.Sprintf("both-%d", i))
			tc.console(t, w)
			w.clk.Advance(500 * time.Millisecond)
			w.editConfig(t, tc.user)
			before := w.srv.Calls()
			w.settle(t)
			if n := w.srv.Calls()[tc.writes] - before[tc.writes]; n != 0 {
				t.Errorf("the field in conflict was written (%d %s calls)", n, tc.writes)
			}
			snap, _ := w.srv.Cluster(w.key.Name)
			if got := tc.inEKS(snap); !reflect.DeepEqual(got, tc.before) {
				t.Errorf("EKS has %v, want the console's %v", got, tc.before)
			}
			c := w.cluster(t)
			cond := clusterCondition(c, mgmtv1.ConditionConflict)
			if cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, tc.path+" "+tc.values) {
				t.Fatalf("Conflict = %+v, want True naming %s %s", cond, tc.path, tc.values)
			}
			if u := clusterCondition(c, mgmtv1.ConditionUpdated); u == nil || u.Reason != "Conflict" {
				t.Errorf("Updated = %+v", u)
			}
			if notes := w.outsideChanges(t); len(notes) != 0 {
				t.Errorf("a field changed on both sides was adopted: %q", notes)
			}

			// The user answers by editing the field again: pushed.
			w.editConfig(t, tc.fix)
			w.settle(t)
			snap, _ = w.srv.Cluster(w.key.Name)
			if got := tc.inEKS(snap); !reflect.DeepEqual(got, tc.after) {
				t.Errorf("after the answer EKS has %v, want %v", got, tc.after)
			}
			c = w.cluster(t)
			if cond := clusterCondition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionFalse {
				t.Errorf("Conflict after the answer = %+v", cond)
			}
			if op := w.operator(t); len(op.Status.Conflicts) != 0 {
				t.Errorf("operator conflicts after the answer: %+v", op.Status.Conflicts)
			}
		})
	}
}

// A console change of one field and a user change of another field sent
// with the same EKS call: the operator pushes the user's (max size) while
// the console's (desired size) still waits to be adopted, and the call
// carries EKS's desired size, not the config's stale one.
func TestConsoleAndUserDifferentFieldsOfOneCall(t *testing.T) {
	w := everyField(t, "one-call")
	if _, err := w.srv.ConsoleScaleNodegroup("one-call", "workers", 5); err != nil { // InProgress for a minute
		t.Fatal(err)
	}
	w.editConfig(t, func(s *eksv1.EKSClusterConfigSpec) { n := int64(8); (*s.NodeGroups)[0].MaxSize = &n })
	w.pass(t)                      // the edit reaches the operator, which waits for the console's update
	w.clk.Advance(2 * time.Minute) // the console's update completes: desired 5
	w.opPass(t)                    // the operator pushes maxSize before anything adopted desiredSize
	w.settle(t)
	snap, _ := w.srv.Cluster("one-call")
	if ng := snap.Nodegroups["workers"]; ng.MaxSize != 8 || ng.DesiredSize != 5 {
		t.Errorf("EKS node group max %d desired %d, want max 8 (user) and desired 5 (console)", ng.MaxSize, ng.DesiredSize)
	}
	c := w.cluster(t)
	if got := valueAt(t, c.Spec.EKSConfig, "nodeGroups[workers].desiredSize"); got != "5" {
		t.Errorf("config desiredSize %s, want the console's 5 adopted", got)
	}
	if got := valueAt(t, c.Spec.EKSConfig, "nodeGroups[workers].maxSize"); got != "8" {
		t.Errorf("config maxSize %s, want the user's 8", got)
	}
	if notes := w.outsideChanges(t); !slices.ContainsFunc(notes, func(n string) bool {
		return strings.Contains(n, "nodeGroups[workers].desiredSize changed outside clustersync from 2 to 5")
	}) || len(notes) != 1 {
		t.Errorf("OutsideChange events %q, want one for desiredSize", notes)
	}
}

// A push EKS refuses (InvalidParameterException) leaves the config and the
// applied value as they were; failureMessage names the field; nothing is
// adopted. A push EKS accepts but whose update ends Failed is undone the
// same way, reported, and pushed again.
func TestRefusedPush(t *testing.T) {
	w := everyField(t, "refused")
	w.srv.FailNext("UpdateNodegroupConfig", "InvalidParameterException", 400, 1000)
	w.editConfig(t, func(s *eksv1.EKSClusterConfigSpec) { n := int64(3); (*s.NodeGroups)[0].DesiredSize = &n })
	w.settle(t)
	op, c := w.operator(t), w.cluster(t)
	if !strings.Contains(op.Status.FailureMessage, "nodeGroups[workers].desiredSize") || !strings.Contains(op.Status.FailureMessage, "InvalidParameterException") {
		t.Errorf("failureMessage %q does not name the field and EKS's error", op.Status.FailureMessage)
	}
	if got := valueAt(t, c.Spec.EKSConfig, "nodeGroups[workers].desiredSize"); got != "3" {
		t.Errorf("config desiredSize %s, want the user's 3", got)
	}
	if got := valueAt(t, op.Status.AppliedSpec, "nodeGroups[workers].desiredSize"); got != "2" {
		t.Errorf("applied desiredSize %s, want 2 (unchanged)", got)
	}
	if len(op.Status.PendingUpdates) != 0 {
		t.Errorf("pending %+v", op.Status.PendingUpdates)
	}
	if u := clusterCondition(c, mgmtv1.ConditionUpdated); u == nil || u.Status != metav1.ConditionFalse || !strings.Contains(u.Message, "nodeGroups[workers].desiredSize") {
		t.Errorf("Updated = %+v", u)
	}
	if c.Status.Phase != mgmtv1.PhaseError {
		t.Errorf("phase %s", c.Status.Phase)
	}
	if notes := w.outsideChanges(t); len(notes) != 0 {
		t.Errorf("adopted after a refused push: %q", notes)
	}

	// Accepted, then Failed in EKS.
	w.srv.FailNext("UpdateNodegroupConfig", "", 0, 0)
	w.srv.FailUpdates(1, "InsufficientFreeAddresses", "no free addresses")
	w.pass(t) // pushed again, accepted
	if op := w.operator(t); len(op.Status.PendingUpdates) != 1 || op.Status.PendingUpdates[0].UpdateID == "" {
		t.Fatalf("pending after an accepted push: %+v", op.Status.PendingUpdates)
	}
	w.clk.Advance(2 * time.Minute) // the update ends Failed
	w.opPass(t)
	op = w.operator(t)
	if !strings.Contains(op.Status.FailureMessage, "nodeGroups[workers].desiredSize: EKS update") ||
		!strings.Contains(op.Status.FailureMessage, "Failed (InsufficientFreeAddresses: no free addresses)") {
		t.Errorf("failureMessage %q", op.Status.FailureMessage)
	}
	w.settle(t) // pushed once more, and this time it succeeds
	snap, _ := w.srv.Cluster("refused")
	c = w.cluster(t)
	if snap.Nodegroups["workers"].DesiredSize != 3 || valueAt(t, c.Spec.EKSConfig, "nodeGroups[workers].desiredSize") != "3" {
		t.Errorf("EKS %d, config %s; want 3 in both", snap.Nodegroups["workers"].DesiredSize, valueAt(t, c.Spec.EKSConfig, "nodeGroups[workers].desiredSize"))
	}
	if notes := w.outsideChanges(t); len(notes) != 0 {
		t.Errorf("adopted after a failed update: %q", notes)
	}
}
