package patches

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestExpressionEval(t *testing.T) {
	lim := DefaultLimits()
	for _, tc := range []struct {
		expr string
		in   any
		want any
	}{
		{`"my-prefix-" + value`, "x", "my-prefix-x"},
		{`value.slice("my-prefix-".length)`, "my-prefix-x", "x"},
		{`value.replace(/^docker\.io\//, "mirror.local/")`, "docker.io/nginx", "mirror.local/nginx"},
		{`value * 2`, int64(21), int64(42)},
		{`value / 4`, int64(2), 0.5},
		{`value.map(function (x) { return x.toUpperCase() })`, []any{"a", "b"}, []any{"A", "B"}},
		{`Object.assign({}, value, {b: "2"})`, map[string]any{"a": "1"}, map[string]any{"a": "1", "b": "2"}},
		{`undefined`, "x", nil},
		{`null`, "x", nil},
		{`value // a trailing comment`, "x", "x"},
		{`!value`, false, true},
	} {
		e, err := CompileExpression(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		got, err := e.Eval(tc.in, lim)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s on %#v = %#v, want %#v", tc.expr, tc.in, got, tc.want)
		}
	}
}

func TestExpressionDoesNotModifyInput(t *testing.T) {
	e, _ := CompileExpression(`(value.a = "changed", value)`)
	in := map[string]any{"a": "orig"}
	if _, err := e.Eval(in, DefaultLimits()); err != nil {
		t.Fatal(err)
	}
	if in["a"] != "orig" {
		t.Errorf("input modified: %v", in)
	}
}

func TestExpressionErrors(t *testing.T) {
	for _, src := range []string{`value +`, `)`, `value; return 1`} {
		if _, err := CompileExpression(src); err == nil {
			t.Errorf("CompileExpression(%q) accepted", src)
		}
	}
	lim := Limits{Timeout: 50 * time.Millisecond, MaxBytes: 1 << 20}
	for _, tc := range []struct {
		expr, want string
		limit      bool
	}{
		{`value.nope.deeper`, "TypeError", false},
		{`(function f() { return f() })()`, "", false},
		{`(function () { throw new Error("boom") })()`, "boom", false},
		{`(function () { while (true) {} })()`, "ran longer than", true},
		{`"x".repeat(1 << 30)`, "memory limit exceeded", false},
		{`"x".padStart(1 << 30)`, "memory limit exceeded", false},
		{`new Array(1 << 28)`, "memory limit exceeded", false},
		{`(function () { var s = "xxxxxxxx"; while (true) { s = s + s } })()`, "", true},
		{`(function () { var a = []; while (true) { a.push({x: a.length}) } })()`, "", true},
		{`(function () { return function () {} })()`, "function", false},
	} {
		e, err := CompileExpression(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		start := time.Now()
		_, err = e.Eval("v", lim)
		if err == nil {
			t.Errorf("%s: no error", tc.expr)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not contain %q", tc.expr, err, tc.want)
		}
		if tc.limit && !errors.Is(err, ErrLimit) {
			t.Errorf("%s: error %v is not ErrLimit", tc.expr, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %s", tc.expr, d)
		}
	}
}

func BenchmarkExpressionEval(b *testing.B) {
	e, _ := CompileExpression(`"my-prefix-" + value`)
	lim := DefaultLimits()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Eval("x", lim); err != nil {
			b.Fatal(err)
		}
	}
}
