package config

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary bytes. Its seed corpus
// (testdata/fuzz/FuzzParse) holds the chart's values.yaml, vCluster-style
// files and broken variants of them; the current values.yaml is added too.
// Properties:
//
//   - Parse never panics (it decodes by reflection over the types, so a
//     value of an unexpected shape anywhere must become an error);
//   - a Config Parse returns passes Validate: Parse may not accept what
//     Validate refuses (the runner and virtual create rely on Parse alone);
//   - an error is either one "invalid YAML: …" error, on one line, or
//     FieldErrors one per line, each starting with the path of its key
//     ("" only for a document that is not an object): every line names
//     what to fix.
//
// Why: the file comes from the user (virtual create --values, the chart's
// values); a panic kills the syncer or the CLI, and an error line without a
// path does not say where the problem is.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile(ExampleFile); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err == nil {
			if cfg == nil {
				t.Fatal("Parse returned neither a Config nor an error")
			}
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("Parse accepted a Config that Validate refuses:\n%v\ninput:\n%s", verr, data)
			}
			return
		}
		if cfg != nil {
			t.Errorf("Parse returned a Config with error %v", err)
		}
		msg := err.Error()
		if strings.HasPrefix(msg, "invalid YAML: ") {
			if strings.Contains(msg, "\n") {
				t.Errorf("the invalid-YAML error spans lines:\n%s", msg)
			}
			return
		}
		multi, ok := err.(interface{ Unwrap() []error })
		if !ok {
			t.Fatalf("error is neither invalid YAML nor joined FieldErrors: %T %q", err, msg)
		}
		errs := multi.Unwrap()
		lines := strings.Split(msg, "\n")
		if len(lines) != len(errs) {
			t.Errorf("%d errors on %d lines:\n%s", len(errs), len(lines), msg)
		}
		for _, e := range errs {
			var fe *FieldError
			if !errors.As(e, &fe) {
				t.Errorf("error %q is not a FieldError", e)
				continue
			}
			if fe.Path == "" && !strings.HasPrefix(fe.Message, "expected an object at the top level") {
				t.Errorf("error %q names no path", fe)
			}
			if fe.Path != "" && !strings.HasPrefix(fe.Error(), fe.Path+": ") {
				t.Errorf("error %q does not start with its path %q", fe, fe.Path)
			}
		}
	})
}
