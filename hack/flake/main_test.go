package main

import (
	"strings"
	"testing"
)

func TestFailures(t *testing.T) {
	events := strings.Join([]string{
		`{"Action":"run","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"pass","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"p/a","Test":"TestParent/sub","Output":"    x_test.go:12: want 1, got 2\n"}`,
		`{"Action":"fail","Package":"p/a","Test":"TestParent/sub"}`,
		`{"Action":"fail","Package":"p/a","Test":"TestParent"}`,
		`{"Action":"fail","Package":"p/a"}`,
		`{"Action":"output","Package":"p/b","Output":"hostcluster: port 20002 still not released\n"}`,
		`{"Action":"output","Package":"p/b","Output":"FAIL\tp/b\t1.2s\n"}`,
		`{"Action":"fail","Package":"p/b"}`,
		`{"Action":"output","Package":"p/c","Test":"TestHang","Output":"panic: test timed out after 25m0s\n"}`,
		`{"Action":"fail","Package":"p/c","Test":"TestHang"}`,
		`{"Action":"fail","Package":"p/c"}`,
		`not json`,
	}, "\n")
	got := failures(3, strings.NewReader(events))
	want := []failure{
		{run: 3, pkg: "p/a", test: "TestParent/sub", first: "x_test.go:12: want 1, got 2"},
		{run: 3, pkg: "p/b", test: "", first: "(no error line; see the output)"},
		{run: 3, pkg: "p/c", test: "TestHang", first: "panic: test timed out after 25m0s"},
	}
	if len(got) != len(want) {
		t.Fatalf("failures = %+v, want %d", got, len(want))
	}
	for i := range want {
		g := got[i]
		g.output = ""
		if g != want[i] {
			t.Errorf("failure %d = %+v, want %+v", i, g, want[i])
		}
	}
	if !strings.Contains(got[1].output, "still not released") {
		t.Errorf("the package's output is not kept: %q", got[1].output)
	}
}
