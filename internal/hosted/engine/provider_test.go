package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Check names the first field a cloud's Traits leave unset, and passes
// complete ones.
func TestTraitsCheck(t *testing.T) {
	full := func() Traits[spec, *object] {
		return Traits[spec, *object]{
			Name: "Cloud", Finalizer: "cloud.example/cleanup",
			New:            func() *object { return &object{} },
			Imported:       func(spec) bool { return false },
			CreatedApplied: func(s spec) spec { return s },
			Order:          func(c []managed.Change) []managed.Change { return c },
			CallGroup:      func(path string) string { return path },
			Vet:            func(spec, managed.Change) (bool, error) { return true, nil },
			Retryable:      func(err error) bool { return errors.Is(err, ErrWaiting) },
		}
	}
	if err := full().Check(); err != nil {
		t.Fatalf("complete traits: %v", err)
	}
	for field, unset := range map[string]func(*Traits[spec, *object]){
		"Name":           func(t *Traits[spec, *object]) { t.Name = "" },
		"Finalizer":      func(t *Traits[spec, *object]) { t.Finalizer = "" },
		"New":            func(t *Traits[spec, *object]) { t.New = nil },
		"Imported":       func(t *Traits[spec, *object]) { t.Imported = nil },
		"CreatedApplied": func(t *Traits[spec, *object]) { t.CreatedApplied = nil },
		"Order":          func(t *Traits[spec, *object]) { t.Order = nil },
		"CallGroup":      func(t *Traits[spec, *object]) { t.CallGroup = nil },
		"Vet":            func(t *Traits[spec, *object]) { t.Vet = nil },
		"Retryable":      func(t *Traits[spec, *object]) { t.Retryable = nil },
	} {
		tr := full()
		unset(&tr)
		if err := tr.Check(); err == nil || !strings.Contains(err.Error(), field+" is not set") {
			t.Errorf("%s unset: err = %v", field, err)
		}
	}
}
