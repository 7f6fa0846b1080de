package management_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// hosted sees a Cluster through the world's cloud, as manager.Hosted does.
func (w *world) hosted(c *mgmtv1.Cluster) (management.View, bool) {
	return management.ViewOf(w.mgmt.Traits, c)
}

// clusterEditor returns a client of a user whose RBAC allows getting,
// listing, watching, updating and patching Clusters, and nothing else (no
// operator object): who `clustersync cluster resolve` and the dashboard
// answer a conflict as.
func clusterEditor(t *testing.T) client.Client {
	t.Helper()
	ctx := context.Background()
	name := "cluster-editor-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{mgmtv1.GroupVersion.Group}, Resources: []string{"clusters"}, Verbs: []string{"get", "list", "watch", "update", "patch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}
	for _, o := range []client.Object{role, binding} {
		if err := k.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k.Delete(context.Background(), o) })
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventNotes lists the notes of the events of reason about c that reached
// the API server.
func eventNotes(t *testing.T, c *mgmtv1.Cluster, reason string) []string {
	t.Helper()
	list, err := kube.EventsV1().Events("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Name == c.Name && e.Reason == reason {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// The console scales workers to 4 while the user sets 1: Conflict. The
// user — allowed to edit the Cluster, not to read the operator object —
// answers "keep my value" (management.Resolve, as the CLI and the
// dashboard do): the annotation reaches the operator object, 1 is pushed
// to EKS, the Conflict clears, and the answer is removed from both objects
// with a ConflictAnswered event.
func TestKeepMyValue(t *testing.T) {
	w := everyField(t, "keep")
	ctx := context.Background()
	const path = "nodeGroups[workers].desiredSize"
	if _, err := w.srv.ConsoleScaleNodegroup(w.key.Name, "workers", 4); err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(500 * time.Millisecond)
	w.editConfig(t, func(s *eksv1.EKSClusterConfigSpec) { n := int64(1); (*s.NodeGroups)[0].DesiredSize = &n })
	w.settle(t)
	c := w.cluster(t)
	if cond := clusterCondition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, path+" (config 1, upstream 4, last applied 2)") {
		t.Fatalf("Conflict = %+v, want True on %s", cond, path)
	}

	// An answer of other values (a conflict before this one) answers
	// nothing: removed with a warning, nothing pushed.
	c.Annotations = map[string]string{engine.KeepAnnotation: `{"` + path + `":{"config":1,"upstream":3}}`}
	if err := k.Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	before := w.srv.Calls()
	w.settle(t)
	if n := w.srv.Calls()["UpdateNodegroupConfig"] - before["UpdateNodegroupConfig"]; n != 0 {
		t.Errorf("a stale answer pushed (%d UpdateNodegroupConfig calls)", n)
	}
	c = w.cluster(t)
	if _, ok := c.Annotations[engine.KeepAnnotation]; ok {
		t.Errorf("the stale answer is still there: %v", c.Annotations)
	}
	if cond := clusterCondition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("Conflict after a stale answer = %+v, want True", cond)
	}

	// The answer of a user allowed to edit the Cluster, and nothing else.
	editor := clusterEditor(t)
	if err := editor.Get(ctx, client.ObjectKey{Namespace: eksv1.Namespace, Name: w.key.Name}, &eksv1.EKSClusterConfig{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the editor reads the operator object (%v): the test would not show it is not needed", err)
	}
	cf, err := management.Resolve(ctx, editor, w.hosted, w.key.Name, path, management.Keep)
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config != "1" || cf.Upstream != "4" {
		t.Errorf("answered %+v", cf)
	}
	c = w.cluster(t)
	if got := c.Annotations[engine.KeepAnnotation]; got != `{"`+path+`":{"config":1,"upstream":4}}` {
		t.Errorf("annotation %s = %s", engine.KeepAnnotation, got)
	}
	w.pass(t) // the management controller copies the answer, the operator pushes
	if got := w.operator(t).Annotations[engine.KeepAnnotation]; got != "" {
		if ks, _ := engine.KeepsOf(w.operator(t).Annotations); !ks.Answers(cf) {
			t.Errorf("the operator object carries %s, not the answer", got)
		}
	}
	w.settle(t)
	snap, _ := w.srv.Cluster(w.key.Name)
	if got := snap.Nodegroups["workers"].DesiredSize; got != 1 {
		t.Errorf("EKS desired size %d after keeping 1", got)
	}
	c = w.cluster(t)
	if cond := clusterCondition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Errorf("Conflict after keeping = %+v, want False", cond)
	}
	if got := valueAt(t, c.Spec.EKSConfig, path); got != "1" {
		t.Errorf("config %s after keeping, want 1", got)
	}
	op := w.operator(t)
	if len(op.Status.Conflicts) != 0 {
		t.Errorf("operator conflicts after keeping: %+v", op.Status.Conflicts)
	}
	if got := valueAt(t, op.Status.AppliedSpec, path); got != "1" {
		t.Errorf("applied %s after keeping, want 1", got)
	}
	for what, a := range map[string]map[string]string{"Cluster": c.Annotations, "operator object": op.Annotations} {
		if v, ok := a[engine.KeepAnnotation]; ok {
			t.Errorf("the %s keeps the answer %s after it was taken", what, v)
		}
	}
	// One marker per object reaches the API server (the recorder makes a
	// series of the next one): the notes after the first are listed.
	if notes := hostedtest.EventNotes(t, kube, recorder, &c, "ConflictAnswered"); len(notes) != 1 || !strings.Contains(notes[0], "kept your value 1 over EKS's 4") {
		t.Errorf("ConflictAnswered events %q, want one", notes)
	}
	if notes := eventNotes(t, &c, "KeepIgnored"); len(notes) != 1 || !strings.Contains(notes[0], "no conflict with those values") {
		t.Errorf("KeepIgnored events %q, want one", notes)
	}
	if notes := eventNotes(t, &c, "OutsideChange"); len(notes) != 0 {
		t.Errorf("OutsideChange events %q", notes)
	}
	if _, err := management.Resolve(ctx, k, w.hosted, w.key.Name, path, management.Keep); !errors.Is(err, management.ErrNoConflict) {
		t.Errorf("keeping again: %v, want ErrNoConflict", err)
	}
}

// Resolve's answers to a tags conflict: keep is refused once the field was
// edited (the edit answers), take sets the cloud's value in the config and
// writes nothing to EKS.
func TestResolveTake(t *testing.T) {
	w := imported(t, "take")
	ctx := context.Background()
	if err := w.srv.ConsoleSetTags(arnOf(t, w.srv, "take"), map[string]string{"team": "console"}); err != nil {
		t.Fatal(err)
	}
	w.editConfig(t, func(s *eksv1.EKSClusterConfigSpec) { *s.Tags = map[string]string{"team": "clustersync"} })
	w.settle(t)
	if _, err := management.Resolve(ctx, k, w.hosted, "take", "version", management.Take); !errors.Is(err, management.ErrNoConflict) {
		t.Errorf("take on a field in no conflict: %v, want ErrNoConflict", err)
	}
	if _, err := management.Resolve(ctx, k, w.hosted, "take", "tags", "mine"); err == nil {
		t.Error("an unknown answer is accepted")
	}
	c := w.cluster(t)
	*c.Spec.EKSConfig.Tags = map[string]string{"team": "edited"}
	if err := k.Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	if _, err := management.Resolve(ctx, k, w.hosted, "take", "tags", management.Keep); !errors.Is(err, management.ErrNoConflict) || !strings.Contains(err.Error(), "that edit is pushed") {
		t.Errorf("keep after an edit: %v, want ErrNoConflict (the edit answers)", err)
	}
	*c.Spec.EKSConfig.Tags = map[string]string{"team": "clustersync"}
	if err := k.Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	before := w.srv.Calls()
	if _, err := management.Resolve(ctx, k, w.hosted, "take", "tags", management.Take); err != nil {
		t.Fatal(err)
	}
	w.settle(t)
	if n := w.srv.Calls()["TagResource"] - before["TagResource"]; n != 0 {
		t.Errorf("taking the cloud's value wrote to EKS (%d TagResource calls)", n)
	}
	c = w.cluster(t)
	if got := *c.Spec.EKSConfig.Tags; !reflect.DeepEqual(got, map[string]string{"team": "console"}) {
		t.Errorf("config tags %v after take, want the console's", got)
	}
	if cond := clusterCondition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Errorf("Conflict after take = %+v", cond)
	}
}
