package engine

import (
	"testing"
	"time"
)

// Readings hand over the latest reading taken after a time, as a copy; a
// nil *Readings keeps nothing.
func TestReadings(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	v := "1.31"
	var rs Readings[spec]
	if _, ok := rs.Since("a", time.Time{}); ok {
		t.Fatal("a reading before any was put")
	}
	rs.Put("a", Reading[spec]{Upstream: Upstream[spec]{Spec: spec{Name: "a", Version: &v}, Version: "1.31.2"}, At: t0})
	if _, ok := rs.Since("a", t0); ok {
		t.Error("a reading taken at the time asked, not after it, was handed over")
	}
	r, ok := rs.Since("a", t0.Add(-time.Second))
	if !ok || r.Spec.Name != "a" || r.Version != "1.31.2" || !r.At.Equal(t0) {
		t.Fatalf("Since = %+v, %v", r, ok)
	}
	*r.Spec.Version = "changed"
	if again, _ := rs.Since("a", time.Time{}); *again.Spec.Version != "1.31" {
		t.Errorf("a reading handed over shares its spec with the one kept: %s", *again.Spec.Version)
	}
	v = "changed too"
	if again, _ := rs.Since("a", time.Time{}); *again.Spec.Version != "1.31" {
		t.Errorf("a reading kept shares its spec with the one put: %s", *again.Spec.Version)
	}
	if _, ok := rs.Since("b", time.Time{}); ok {
		t.Error("another object's reading was handed over")
	}
	rs.Forget("a")
	if _, ok := rs.Since("a", time.Time{}); ok {
		t.Error("a forgotten reading was handed over")
	}
	var none *Readings[spec]
	none.Put("a", Reading[spec]{At: t0})
	if _, ok := none.Since("a", time.Time{}); ok {
		t.Error("a nil Readings kept a reading")
	}
	none.Forget("a")
}
