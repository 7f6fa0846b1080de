package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// spec has the shape of a provider's config spec: identity fields, nillable
// fields, and a keyed list of pools.
type spec struct {
	Name    string             `json:"name"`
	Version *string            `json:"version,omitempty"`
	Tags    *map[string]string `json:"tags,omitempty"`
	Pools   *[]pool            `json:"pools,omitempty"`
}

type pool struct {
	Name  string `json:"name"`
	Count *int64 `json:"count,omitempty"`
}

var opts = managed.Options{KeyedLists: map[string]string{"pools": "name"}}

// object is an operator object of spec.
type object struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              spec         `json:"spec"`
	Status            objectStatus `json:"status,omitempty"`
}

type objectStatus struct {
	hostedv1.OperatorStatus `json:",inline"`
	AppliedSpec             *spec `json:"appliedSpec,omitempty"`
}

func (o *object) ConfigSpec() *spec                        { return &o.Spec }
func (o *object) OperatorRecord() *hostedv1.OperatorStatus { return &o.Status.OperatorStatus }
func (o *object) AppliedSpecRef() **spec                   { return &o.Status.AppliedSpec }
func (o *object) DeepCopyObject() runtime.Object {
	c := &object{TypeMeta: o.TypeMeta, ObjectMeta: *o.ObjectMeta.DeepCopy(), Spec: managed.Copy(o.Spec)}
	c.Status = managed.Copy(o.Status)
	return c
}

func p[T any](v T) *T { return &v }

func versionOf(s *spec) string {
	if s == nil || s.Version == nil {
		return "<nil>"
	}
	return *s.Version
}

func TestAppliedOfTakesIdentityFromSpec(t *testing.T) {
	o := &object{Spec: spec{Name: "prod", Version: p("1.31")}}
	if a := AppliedOf[spec](o); a.Name != "prod" || a.Version != nil {
		t.Errorf("AppliedOf with no record = %+v, want the spec's name and nothing applied", a)
	}
	o.Status.AppliedSpec = &spec{Name: "old", Version: p("1.30")}
	a := AppliedOf[spec](o)
	if a.Name != "prod" || versionOf(&a) != "1.30" {
		t.Errorf("AppliedOf = %+v, want name prod, version 1.30", a)
	}
	*a.Version = "changed"
	if versionOf(o.Status.AppliedSpec) != "1.30" {
		t.Error("AppliedOf shares memory with the record")
	}
}

// A push is on record (applied and pending) before the call; undo puts the
// applied value back and keeps the other pending pushes.
func TestWriteAheadAndUndo(t *testing.T) {
	o := &object{Spec: spec{Name: "prod", Version: p("1.31"), Tags: &map[string]string{"a": "1"}}}
	o.Status.AppliedSpec = &spec{Version: p("1.30")}
	o.Status.PendingUpdates = []hostedv1.PendingUpdate{{Path: "pools[x]", Value: "null", Previous: `{"name":"x"}`}}
	call := []managed.Change{{Path: "version"}, {Path: "tags"}}
	target := spec{Name: "prod", Version: p("1.31"), Tags: &map[string]string{"a": "1"}}
	if err := writeAhead(o, target, call, opts); err != nil {
		t.Fatal(err)
	}
	want := []hostedv1.PendingUpdate{
		{Path: "pools[x]", Value: "null", Previous: `{"name":"x"}`},
		{Path: "version", Value: `"1.31"`, Previous: `"1.30"`},
		{Path: "tags", Value: `{"a":"1"}`, Previous: "null"},
	}
	if !reflect.DeepEqual(o.Status.PendingUpdates, want) {
		t.Errorf("pending after writeAhead = %+v, want %+v", o.Status.PendingUpdates, want)
	}
	if versionOf(o.Status.AppliedSpec) != "1.31" || o.Status.AppliedSpec.Tags == nil {
		t.Errorf("applied after writeAhead = %+v, want the pushed values", o.Status.AppliedSpec)
	}
	if err := undo(o, call, opts); err != nil {
		t.Fatal(err)
	}
	if len(o.Status.PendingUpdates) != 1 || o.Status.PendingUpdates[0].Path != "pools[x]" {
		t.Errorf("pending after undo = %+v, want only pools[x]", o.Status.PendingUpdates)
	}
	if versionOf(o.Status.AppliedSpec) != "1.30" || o.Status.AppliedSpec.Tags != nil {
		t.Errorf("applied after undo = %+v, want version 1.30 and no tags", o.Status.AppliedSpec)
	}
}

// The record is settled (an outside change can be told) only while the
// operator is active with nothing pending.
func TestAppliedForReady(t *testing.T) {
	for _, tt := range []struct {
		name    string
		phase   string
		pending bool
		want    bool
	}{
		{"active, nothing pending", hostedv1.PhaseActive, false, true},
		{"active, a push pending", hostedv1.PhaseActive, true, false},
		{"updating", hostedv1.PhaseUpdating, false, false},
		{"creating", hostedv1.PhaseCreating, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &object{Spec: spec{Name: "op-name"}}
			o.Status.Phase = tt.phase
			o.Status.AppliedSpec = &spec{Version: p("1.30")}
			if tt.pending {
				o.Status.PendingUpdates = []hostedv1.PendingUpdate{{Path: "version"}}
			}
			applied, ready, err := AppliedFor(o, spec{Name: "config-name"}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if ready != tt.want || applied.Name != "config-name" || versionOf(&applied) != "1.30" {
				t.Errorf("AppliedFor = %+v, ready %v; want ready %v, the config's name, version 1.30", applied, ready, tt.want)
			}
		})
	}
}

// A conflict the user answered by editing the field again counts as
// answered: the applied value becomes the upstream one recorded, so the
// new config value is pushed.
func TestAppliedForAnswersConflicts(t *testing.T) {
	o := &object{}
	o.Status.Phase = hostedv1.PhaseActive
	o.Status.AppliedSpec = &spec{Version: p("1.30")}
	o.Status.Conflicts = []hostedv1.FieldConflict{{Path: "version", Config: `"1.31"`, Upstream: `"1.32"`, Applied: `"1.30"`}}
	applied, _, err := AppliedFor(o, spec{Version: p("1.33")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if versionOf(&applied) != "1.32" {
		t.Errorf("applied version = %s, want the recorded upstream 1.32", versionOf(&applied))
	}
	applied, _, err = AppliedFor(o, spec{Version: p("1.31")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if versionOf(&applied) != "1.30" {
		t.Errorf("applied version with the conflict unanswered = %s, want 1.30", versionOf(&applied))
	}
}

// A conflict the user answered "keep my value" (the object's
// KeepAnnotation with the conflict's values) counts as answered with the
// config unchanged; an answer of other values, or of another path, does
// not.
func TestAppliedForKeeps(t *testing.T) {
	cf := hostedv1.FieldConflict{Path: "version", Config: `"1.31"`, Upstream: `"1.32"`, Applied: `"1.30"`}
	for _, tt := range []struct {
		name, annotation string
		want             string // the applied version
	}{
		{"no answer", "", "1.30"},
		{"keep", `{"version":{"config":"1.31","upstream":"1.32"}}`, "1.32"},
		{"keep, spaced", `{"version": {"upstream": "1.32", "config": "1.31"}}`, "1.32"},
		{"a stale keep: another upstream value", `{"version":{"config":"1.31","upstream":"1.29"}}`, "1.30"},
		{"a stale keep: another config value", `{"version":{"config":"1.28","upstream":"1.32"}}`, "1.30"},
		{"another path", `{"tags":{"config":"1.31","upstream":"1.32"}}`, "1.30"},
		{"an annotation that does not parse", `{"version":"1.31"}`, "1.30"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &object{}
			if tt.annotation != "" {
				o.Annotations = map[string]string{KeepAnnotation: tt.annotation}
			}
			o.Status.Phase = hostedv1.PhaseActive
			o.Status.AppliedSpec = &spec{Version: p("1.30")}
			o.Status.Conflicts = []hostedv1.FieldConflict{cf}
			applied, _, err := AppliedFor(o, spec{Version: p("1.31")}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := versionOf(&applied); got != tt.want {
				t.Errorf("applied version = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestKeepsOf(t *testing.T) {
	for _, tt := range []struct {
		name, annotation string
		want             Keeps
		err              string
	}{
		{"absent", "", nil, ""},
		{"one", `{"tags":{"config":{"team":"a"},"upstream":null}}`, Keeps{"tags": {Config: []byte(`{"team":"a"}`), Upstream: []byte(`null`)}}, ""},
		{"not JSON", `tags`, nil, "want a JSON object"},
		{"a value, not an answer", `{"tags":"a"}`, nil, "want a JSON object"},
		{"no upstream", `{"tags":{"config":1}}`, nil, `tags: want both "config" and "upstream"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := map[string]string{"other": "x"}
			if tt.annotation != "" {
				a[KeepAnnotation] = tt.annotation
			}
			got, err := KeepsOf(a)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), KeepAnnotation) {
					t.Errorf("KeepsOf = %v, %v; want an error naming %s and saying %q", got, err, KeepAnnotation, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("KeepsOf = %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

// Split keeps the answers of conflicts recorded now, with exactly their
// values; Render and SetOn write them back, paths sorted, the annotation
// gone when none is left.
func TestKeepsSplitAndRender(t *testing.T) {
	conflicts := []hostedv1.FieldConflict{
		{Path: "tags", Config: `{"team":"user"}`, Upstream: `{"team":"console"}`, Applied: `{"team":"a"}`},
		{Path: "pools[a].count", Config: `1`, Upstream: `4`, Applied: `2`},
	}
	ks := Keeps{
		"tags":           KeepOf(conflicts[0]),
		"pools[a].count": {Config: []byte(`1`), Upstream: []byte(`3`)}, // a conflict before this one
		"version":        {Config: []byte(`"1.31"`), Upstream: []byte(`"1.32"`)},
	}
	live, gone := ks.Split(conflicts)
	if want := (Keeps{"tags": ks["tags"]}); !reflect.DeepEqual(live, want) {
		t.Errorf("live = %v, want %v", live, want)
	}
	if _, v := gone["version"]; len(gone) != 2 || !v || !reflect.DeepEqual(gone["pools[a].count"], ks["pools[a].count"]) {
		t.Errorf("gone = %v, want version and pools[a].count", gone)
	}
	if live, gone := Keeps(nil).Split(conflicts); live != nil || gone != nil {
		t.Errorf("Split of none = %v, %v", live, gone)
	}
	got, err := gone.Render()
	if want := `{"pools[a].count":{"config":1,"upstream":3},"version":{"config":"1.31","upstream":"1.32"}}`; err != nil || got != want {
		t.Errorf("Render = %s, %v; want %s", got, err, want)
	}
	a, err := live.SetOn(map[string]string{"other": "x"})
	if err != nil || a[KeepAnnotation] != `{"tags":{"config":{"team":"user"},"upstream":{"team":"console"}}}` || a["other"] != "x" {
		t.Errorf("SetOn = %v, %v", a, err)
	}
	if a, err = Keeps(nil).SetOn(a); err != nil || len(a) != 1 || a["other"] != "x" {
		t.Errorf("SetOn of none = %v, %v; want the annotation removed", a, err)
	}
	if a, err = live.SetOn(nil); err != nil || a[KeepAnnotation] == "" {
		t.Errorf("SetOn(nil) = %v, %v", a, err)
	}
}

func TestSameCall(t *testing.T) {
	group := func(path string) string {
		if name, _, ok := strings.Cut(path, "].count"); ok {
			return name + "].scaling"
		}
		return path
	}
	in := []managed.Change{{Path: "pools[a].count"}, {Path: "tags"}, {Path: "pools[b].count"}, {Path: "pools[a].count"}}
	var got []string
	for _, ch := range SameCall(in, group) {
		got = append(got, ch.Path)
	}
	if want := []string{"pools[a].count", "pools[a].count"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SameCall = %v, want %v", got, want)
	}
}

// fakeSession answers Outcome from a table; the other steps are not used.
type fakeSession struct {
	Session[spec]
	outcomes map[string]string
	asked    []string
}

func (f *fakeSession) Outcome(_ context.Context, pu hostedv1.PendingUpdate) (string, error) {
	f.asked = append(f.asked, pu.UpdateID)
	return f.outcomes[pu.UpdateID], nil
}

// settlePending keeps a push that took effect and gives a failed one its
// previous applied value back, naming the field.
func TestSettlePending(t *testing.T) {
	for _, tt := range []struct {
		name     string
		pending  hostedv1.PendingUpdate
		finished map[string]string
		outcomes map[string]string
		upstream spec
		failure  string // "" when the push took effect
		asked    bool   // Session.Outcome was asked
		held     bool   // a conflict held until the user edits the field
		verify   bool   // the provider's VerifyLanded
	}{
		{name: "operation seen succeeding", pending: hostedv1.PendingUpdate{Path: "version", UpdateID: "u1", Value: `"1.31"`, Previous: `"1.30"`},
			finished: map[string]string{"u1": ""}},
		{name: "operation seen failing", pending: hostedv1.PendingUpdate{Path: "version", UpdateID: "u1", Value: `"1.31"`, Previous: `"1.30"`},
			finished: map[string]string{"u1": "update u1 ended Failed"}, failure: "version: update u1 ended Failed"},
		{name: "operation succeeded, value shown, verified", pending: hostedv1.PendingUpdate{Path: "version", UpdateID: "u1", Value: `"1.31"`, Previous: `"1.30"`},
			finished: map[string]string{"u1": ""}, upstream: spec{Version: p("1.31")}, verify: true},
		{name: "operation succeeded, value not shown, verified", pending: hostedv1.PendingUpdate{Path: "version", UpdateID: "u1", Value: `"1.31"`, Previous: `"1.30"`},
			finished: map[string]string{"u1": ""}, upstream: spec{Version: p("1.30")}, verify: true,
			failure: `version: pushed "1.31" but Cloud reports "1.30"; not pushed again until spec changes`, held: true},
		{name: "operation finished earlier, asked", pending: hostedv1.PendingUpdate{Path: "version", UpdateID: "u2", Value: `"1.31"`, Previous: `"1.30"`},
			outcomes: map[string]string{"u2": "update u2 ended Cancelled"}, failure: "version: update u2 ended Cancelled", asked: true},
		{name: "no operation, value landed", pending: hostedv1.PendingUpdate{Path: "version", Value: `"1.31"`, Previous: `"1.30"`},
			upstream: spec{Version: p("1.31")}},
		{name: "no operation, value missing", pending: hostedv1.PendingUpdate{Path: "version", Value: `"1.31"`, Previous: `"1.30"`},
			upstream: spec{Version: p("1.30")}, failure: `version: pushed "1.31" but Cloud reports "1.30"; not pushed again until spec changes`, held: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &object{}
			o.Status.PendingUpdates = []hostedv1.PendingUpdate{tt.pending}
			s := &fakeSession{outcomes: tt.outcomes}
			ps := &pass[spec, *object]{e: &Operator[spec, *object]{Traits: Traits[spec, *object]{Name: "Cloud", VerifyLanded: tt.verify}}, o: o, rec: o.OperatorRecord(), opts: opts, s: s}
			applied := spec{Version: p("1.31")}
			failures, reverted, err := ps.settlePending(context.Background(), tt.upstream, tt.finished, &applied)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(failures, "; "); got != tt.failure {
				t.Errorf("failures = %q, want %q", got, tt.failure)
			}
			wantApplied := "1.31"
			if tt.failure != "" {
				wantApplied = "1.30"
			}
			if versionOf(&applied) != wantApplied {
				t.Errorf("applied version = %s, want %s", versionOf(&applied), wantApplied)
			}
			if (len(s.asked) > 0) != tt.asked {
				t.Errorf("Session.Outcome asked for %v, want asked %v", s.asked, tt.asked)
			}
			if len(o.Status.PendingUpdates) != 0 {
				t.Errorf("pending updates left: %+v", o.Status.PendingUpdates)
			}
			want := []hostedv1.FieldConflict(nil)
			if tt.held {
				want = []hostedv1.FieldConflict{{Path: "version", Config: `"1.31"`, Upstream: `"1.30"`, Applied: `"1.30"`}}
			}
			if !reflect.DeepEqual(reverted, want) {
				t.Errorf("reverted = %+v, want %+v", reverted, want)
			}
		})
	}
}

// A push the cloud took back stays held while neither side moves; the
// user's next edit, or another value upstream, lets the plan decide again.
func TestHeldBack(t *testing.T) {
	recorded := []hostedv1.FieldConflict{{Path: "tags", Config: `{"team":"a"}`, Upstream: `{"cost":"1","team":"a"}`, Applied: `{"cost":"1","team":"a"}`}}
	policy := &map[string]string{"team": "a", "cost": "1"}
	for _, tt := range []struct {
		name             string
		config, upstream *map[string]string
		path             string
		want             bool
	}{
		{"nothing moved", &map[string]string{"team": "a"}, policy, "tags", true},
		{"the user edited the field", &map[string]string{"team": "b"}, policy, "tags", false},
		{"the cloud moved again", &map[string]string{"team": "a"}, &map[string]string{"team": "a", "cost": "2"}, "tags", false},
		{"another field", &map[string]string{"team": "a"}, policy, "version", false},
		{"the user keeps the value", &map[string]string{"team": "a"}, policy, "tags", false},
		{"a keep of other values", &map[string]string{"team": "a"}, policy, "tags", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var keeps Keeps
			switch tt.name {
			case "the user keeps the value":
				keeps = Keeps{"tags": KeepOf(recorded[0])}
			case "a keep of other values":
				keeps = Keeps{"tags": {Config: []byte(`{"team":"a"}`), Upstream: []byte(`{"team":"b"}`)}}
			}
			cf, held, err := heldBack(recorded, keeps, spec{Tags: tt.config}, spec{Tags: tt.upstream}, tt.path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if held != tt.want || held && cf != recorded[0] {
				t.Errorf("heldBack = %+v, %v; want held %v", cf, held, tt.want)
			}
		})
	}
}
