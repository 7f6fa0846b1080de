package scenarios_test

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/clouds"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
)

// cloud is what a scenario needs of one provider, for one cluster: the
// Cluster's config of that provider, and the cloud as a person in its
// console sees and changes it.
type cloud interface {
	driver() string
	// tagsField is the config field of the cluster's tags (GKE: labels).
	tagsField() string
	configTags(c *mgmtv1.Cluster) map[string]string
	setConfigTags(c *mgmtv1.Cluster, tags map[string]string)
	configPools(c *mgmtv1.Cluster) []string
	addConfigPool(c *mgmtv1.Cluster, name string)
	removeConfigPool(c *mgmtv1.Cluster, name string)
	cloudTags(t *testing.T) map[string]string
	setCloudTags(t *testing.T, tags map[string]string)
	cloudPools(t *testing.T) []string
	addCloudPool(t *testing.T, name string)
	exists() bool
	// refuseTagPushes makes the next n tag writes fail with an error that
	// is not retried; throttleTagPushes with one that is.
	refuseTagPushes(n int)
	throttleTagPushes(n int)
	// writes counts the cloud's write calls so far.
	writes() int
	// updatable sets, in c's config, a new value for every field the
	// provider can change on an existing cluster (the version one minor
	// up, access, add-ons, a pool's size, labels, ...).
	updatable(c *mgmtv1.Cluster)
}

// provider is one cloud in the scenario table: its key and how a world
// of one cluster starts.
type provider struct {
	name  string
	start func(t *testing.T, name string, imported bool) *world
}

// providers are the clouds the table runs against, by their key in the
// table of clouds (TestEveryCloudRunsTheScenarios); a new cloud adds a
// line here and an adapter.
var providers = []provider{
	{"eks", startEKS},
	{"aks", startAKS},
	{"gke", startGKE},
}

// Every cloud of the table of clouds runs the scenarios.
func TestEveryCloudRunsTheScenarios(t *testing.T) {
	for _, d := range clouds.All() {
		if !slices.ContainsFunc(providers, func(p provider) bool { return p.name == d.Key }) {
			t.Errorf("cloud %s (%s) has no world in the scenario table (providers)", d.Name, d.Key)
		}
	}
}

// scenarios are the engine's promises, each run against every provider:
// import (no cloud write), create, a user edit pushed, an outside change
// adopted with an event, an outside change at 11:01 and a user edit at
// 11:03 both kept (the race the sync-clusters reference admits), crossing
// edits held as a Conflict until the user edits again or keeps the value
// (pushed), rapid edits (the
// last value wins), a pool made outside kept and one added and removed, a
// refused push reported with nothing lost, transient errors retried, and
// deletion of a created cluster (gone from the cloud) and of an imported
// one (no cloud write); and every field a provider can change, changed at
// once and applied one call per pass.
var scenarios = []struct {
	name string
	run  func(t *testing.T, start func(imported bool) *world)
}{
	{"import", func(t *testing.T, start func(bool) *world) {
		w := start(true)
		w.settle(t, 4)
		c := w.cluster(t)
		if c.Status.Phase != mgmtv1.PhaseActive || c.Status.Driver != w.cloud.driver() {
			t.Fatalf("phase %s, driver %s; want Active, %s (conditions %+v)", c.Status.Phase, c.Status.Driver, w.cloud.driver(), c.Status.Conditions)
		}
		if n := w.cloud.writes(); n != 0 {
			t.Errorf("%d cloud writes for an import, want none", n)
		}
		if cond := condition(c, mgmtv1.ConditionConnected); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("Connected = %+v", cond)
		}
	}},
	{"create", func(t *testing.T, start func(bool) *world) {
		w := start(false)
		w.settle(t, 14)
		c := w.cluster(t)
		if c.Status.Phase != mgmtv1.PhaseActive {
			t.Fatalf("phase %s, want Active (conditions %+v)", c.Status.Phase, c.Status.Conditions)
		}
		if got := w.cloud.cloudTags(t); !maps.Equal(got, map[string]string{"team": "a"}) {
			t.Errorf("cloud tags %v, want team=a", got)
		}
		if got := w.cloud.cloudPools(t); !slices.Equal(got, []string{"pool1"}) {
			t.Errorf("cloud pools %v, want pool1", got)
		}
	}},
	{"user-edit-pushed", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		want := map[string]string{"team": "b", "env": "prod"}
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.setConfigTags(c, want) })
		w.settle(t, 4)
		if got := w.cloud.cloudTags(t); !maps.Equal(got, want) {
			t.Errorf("cloud tags %v, want %v", got, want)
		}
		if notes := w.outsideChanges(t); len(notes) != 0 {
			t.Errorf("OutsideChange events %q after a user edit", notes)
		}
	}},
	{"outside-change-adopted", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		want := map[string]string{"team": "console"}
		w.cloud.setCloudTags(t, want)
		w.settle(t, 4)
		if got := w.cloud.configTags(w.cluster(t)); !maps.Equal(got, want) {
			t.Errorf("config tags %v, want the console's %v", got, want)
		}
		if notes := w.outsideChanges(t); len(notes) != 1 || !strings.Contains(notes[0], w.cloud.tagsField()+" changed outside clustersync") {
			t.Errorf("OutsideChange events %q, want one for %s", notes, w.cloud.tagsField())
		}
	}},
	{"outside-1101-user-1103", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		w.cloud.setCloudTags(t, map[string]string{"team": "a", "cost": "1"}) // 11:01, in the console
		w.clk.Advance(2 * time.Minute)
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.addConfigPool(c, "later") }) // 11:03, before any refresh
		w.settle(t, 8)
		if got := w.cloud.configTags(w.cluster(t)); got["cost"] != "1" {
			t.Errorf("config tags %v: the console's change was lost", got)
		}
		if got := w.cloud.cloudTags(t); got["cost"] != "1" {
			t.Errorf("cloud tags %v: the console's change was reverted", got)
		}
		if got := w.cloud.cloudPools(t); !slices.Contains(got, "later") {
			t.Errorf("cloud pools %v: the user's pool was not created", got)
		}
	}},
	{"crossing-edits-conflict", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		w.cloud.setCloudTags(t, map[string]string{"team": "console"})
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.setConfigTags(c, map[string]string{"team": "user"}) })
		w.settle(t, 4)
		c := w.cluster(t)
		if cond := condition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, w.cloud.tagsField()) {
			t.Fatalf("Conflict = %+v, want True naming %s", cond, w.cloud.tagsField())
		}
		if got := w.cloud.cloudTags(t); got["team"] != "console" {
			t.Errorf("cloud tags %v: written despite the conflict", got)
		}
		if got := w.cloud.configTags(c); got["team"] != "user" {
			t.Errorf("config tags %v: overwritten despite the conflict", got)
		}
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.setConfigTags(c, map[string]string{"team": "final"}) })
		w.settle(t, 4)
		if got := w.cloud.cloudTags(t); got["team"] != "final" {
			t.Errorf("cloud tags %v after the user answered, want team=final", got)
		}
		if cond := condition(w.cluster(t), mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionFalse {
			t.Errorf("Conflict = %+v after the answer, want False", cond)
		}
	}},
	{"crossing-edits-kept", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		w.cloud.setCloudTags(t, map[string]string{"team": "console"})
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.setConfigTags(c, map[string]string{"team": "user"}) })
		w.settle(t, 4)
		if cond := condition(w.cluster(t), mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Fatalf("Conflict = %+v, want True", cond)
		}
		// "Keep my value", as the CLI and the dashboard answer.
		if _, err := management.Resolve(context.Background(), k, manager.Hosted, w.name, w.cloud.tagsField(), management.Keep); err != nil {
			t.Fatal(err)
		}
		w.settle(t, 4)
		if got := w.cloud.cloudTags(t); !maps.Equal(got, map[string]string{"team": "user"}) {
			t.Errorf("cloud tags %v after keeping the user's, want team=user", got)
		}
		c := w.cluster(t)
		if cond := condition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionFalse {
			t.Errorf("Conflict = %+v after keeping, want False", cond)
		}
		if got := w.cloud.configTags(c); !maps.Equal(got, map[string]string{"team": "user"}) {
			t.Errorf("config tags %v after keeping, want team=user", got)
		}
		if v, ok := c.Annotations[engine.KeepAnnotation]; ok {
			t.Errorf("the answer %s is still on the Cluster once taken", v)
		}
	}},
	{"every-updatable-field", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.updatable(c) })
		want := w.cluster(t).Spec
		w.settle(t, 24)
		c := w.cluster(t)
		if !reflect.DeepEqual(c.Spec, want) {
			t.Errorf("the config changed while it was applied (something adopted over the user's values):\n got %+v\nwant %+v", c.Spec, want)
		}
		rows, ok := manager.EffectiveRows(c)
		if !ok {
			t.Fatal("no effective state")
		}
		for _, r := range rows {
			if r.Managed && r.Drift {
				t.Errorf("%s: config %s, upstream %s (applied %s): not applied", r.Path, r.Config, r.Upstream, r.Applied)
			}
		}
		if c.Status.Phase != mgmtv1.PhaseActive {
			t.Errorf("phase %s, want Active (conditions %+v)", c.Status.Phase, c.Status.Conditions)
		}
	}},
	{"rapid-edits-last-wins", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		for _, v := range []string{"1", "2", "3"} {
			w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.setConfigTags(c, map[string]string{"v": v}) })
			w.settle(t, 1)
		}
		w.settle(t, 6)
		if got := w.cloud.cloudTags(t); !maps.Equal(got, map[string]string{"v": "3"}) {
			t.Errorf("cloud tags %v, want v=3", got)
		}
		if got := w.cloud.configTags(w.cluster(t)); !maps.Equal(got, map[string]string{"v": "3"}) {
			t.Errorf("config tags %v, want v=3", got)
		}
	}},
	{"pools-added-removed", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		w.cloud.addCloudPool(t, "outside")
		w.settle(t, 6)
		if got := w.cloud.configPools(w.cluster(t)); !slices.Contains(got, "outside") {
			t.Errorf("config pools %v: the pool made outside was not adopted into the managed list", got)
		}
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.addConfigPool(c, "extra") })
		w.settle(t, 6)
		if got := w.cloud.cloudPools(t); !slices.Contains(got, "extra") || !slices.Contains(got, "outside") {
			t.Fatalf("cloud pools %v, want extra and outside", got)
		}
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.removeConfigPool(c, "extra") })
		w.settle(t, 6)
		if got := w.cloud.cloudPools(t); slices.Contains(got, "extra") || !slices.Contains(got, "outside") || !slices.Contains(got, "pool1") {
			t.Errorf("cloud pools %v, want pool1 and outside", got)
		}
	}},
	{"refused-push", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		w.cloud.refuseTagPushes(1000)
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.setConfigTags(c, map[string]string{"team": "z"}) })
		w.settle(t, 4)
		c := w.cluster(t)
		if cond := condition(c, mgmtv1.ConditionUpdated); cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, w.cloud.tagsField()) {
			t.Errorf("Updated = %+v, want False naming %s", cond, w.cloud.tagsField())
		}
		if got := w.cloud.configTags(c); got["team"] != "z" {
			t.Errorf("config tags %v: the user's value was lost", got)
		}
		if got := w.cloud.cloudTags(t); got["team"] != "a" {
			t.Errorf("cloud tags %v, want unchanged", got)
		}
		if notes := w.outsideChanges(t); len(notes) != 0 {
			t.Errorf("adopted after a refused push: %q", notes)
		}
	}},
	{"transient-retried", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		w.cloud.throttleTagPushes(5)
		w.edit(t, func(c *mgmtv1.Cluster) { w.cloud.setConfigTags(c, map[string]string{"team": "z"}) })
		w.settle(t, 8)
		if got := w.cloud.cloudTags(t); got["team"] != "z" {
			t.Errorf("cloud tags %v, want team=z after the retries", got)
		}
		if len(w.errs) == 0 {
			t.Error("no error was returned for a retry")
		}
		if c := w.cluster(t); c.Status.Phase != mgmtv1.PhaseActive {
			t.Errorf("phase %s after the retries, want Active", c.Status.Phase)
		}
	}},
	{"delete-created", func(t *testing.T, start func(bool) *world) {
		w := start(false)
		w.settle(t, 10)
		if err := k.Delete(context.Background(), w.cluster(t)); err != nil {
			t.Fatal(err)
		}
		w.settle(t, 10)
		if w.cloud.exists() {
			t.Error("the cluster still exists in the cloud")
		}
		if err := k.Get(context.Background(), w.key(), &mgmtv1.Cluster{}); !apierrors.IsNotFound(err) {
			t.Errorf("Cluster: %v, want it gone", err)
		}
	}},
	{"delete-imported", func(t *testing.T, start func(bool) *world) {
		w := settled(t, start)
		before := w.cloud.writes()
		if err := k.Delete(context.Background(), w.cluster(t)); err != nil {
			t.Fatal(err)
		}
		w.settle(t, 4)
		if !w.cloud.exists() || w.cloud.writes() != before {
			t.Errorf("exists %v, writes %d → %d; want it kept with no write", w.cloud.exists(), before, w.cloud.writes())
		}
		if err := k.Get(context.Background(), w.key(), &mgmtv1.Cluster{}); !apierrors.IsNotFound(err) {
			t.Errorf("Cluster: %v, want it gone", err)
		}
	}},
}

// settled is an imported cluster both controllers have settled on.
func settled(t *testing.T, start func(bool) *world) *world {
	t.Helper()
	w := start(true)
	w.settle(t, 4)
	if c := w.cluster(t); c.Status.Phase != mgmtv1.PhaseActive {
		t.Fatalf("imported cluster: phase %s, want Active (conditions %+v)", c.Status.Phase, c.Status.Conditions)
	}
	return w
}

// TestScenarios runs every scenario against every provider, in parallel
// (each has its own emulator, clock, namespace and Cluster).
func TestScenarios(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					name := p.name + "-" + sc.name
					sc.run(t, func(imported bool) *world { return p.start(t, name, imported) })
				})
			}
		})
	}
}
