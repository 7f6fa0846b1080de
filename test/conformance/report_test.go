package conformance

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A report in the shape the e2e suite writes (junit_01.xml): specs a focus
// left out are listed as skipped as well, failures carry their text in
// the element, suite nodes appear only when they did not pass.
const sampleJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="6" disabled="0" errors="0" failures="2" time="40">
  <testsuite name="Kubernetes e2e suite" package="/" tests="6" disabled="0" skipped="3" errors="0" failures="2" time="40">
    <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1"></testcase>
    <testcase name="[It] [sig-network] DNS should provide DNS for services  [Conformance]" classname="Kubernetes e2e suite" status="failed" time="30">
      <failure type="failed">[FAILED] Unable to read agnhost_udp@dns-test-service from pod dns-1/dns-test
In [It] at: k8s.io/kubernetes/test/e2e/network/dns_common.go:474 @ 11/26/26 03:00:00
</failure>
    </testcase>
    <testcase name="[It] [sig-node] ConfigMap should be consumable via the environment [NodeConformance] [Conformance]" classname="Kubernetes e2e suite" status="passed" time="6"></testcase>
    <testcase name="[It] [sig-storage] some test that is not conformance" classname="Kubernetes e2e suite" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
    <testcase name="[It] [sig-storage] Image volume should be able to mount an OCI image volume and run a container with it [Conformance]" classname="Kubernetes e2e suite" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
    <testcase name="[It] [sig-apps] Job should run a job [Conformance]" classname="Kubernetes e2e suite" status="timedout" time="3">
      <failure type="timedout">
[TIMEDOUT]
A suite timeout occurred
</failure>
    </testcase>
    <testcase name="[AfterSuite]" classname="Kubernetes e2e suite" status="failed" time="0"><failure type="failed">[FAILED] cleanup failed</failure></testcase>
  </testsuite>
</testsuites>`

func TestSummarize(t *testing.T) {
	conformance := func(name string) bool { return strings.Contains(name, "[Conformance]") }
	for _, tt := range []struct {
		name     string
		selected func(string) bool
		want     string
	}{
		{"conformance", conformance, `passed 1, failed 3, skipped 1 (specs' time 39 s)
FAILED  [AfterSuite]
        cleanup failed
FAILED  [sig-apps] Job should run a job [Conformance]
        A suite timeout occurred
FAILED  [sig-network] DNS should provide DNS for services  [Conformance]
        Unable to read agnhost_udp@dns-test-service from pod dns-1/dns-test
SKIPPED [sig-storage] Image volume should be able to mount an OCI image volume and run a container with it [Conformance]
        skipped
`},
		{"one spec", func(n string) bool { return strings.Contains(n, "ConfigMap") }, `passed 1, failed 1, skipped 0 (specs' time 6 s)
FAILED  [AfterSuite]
        cleanup failed
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Summarize([]byte(sampleJUnit), tt.selected)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
	if _, err := Summarize([]byte("not xml"), conformance); err == nil || !strings.Contains(err.Error(), "not a JUnit report") {
		t.Errorf("bad input: %v", err)
	}
}

func TestLabelFilter(t *testing.T) {
	for _, tc := range []struct {
		serial, want         string
		serialIn, parallelIn bool
	}{
		{"", "Conformance", true, true},
		{"skip", "Conformance && !Serial", false, true},
		{"only", "Conformance && Serial", true, false},
	} {
		got, in, err := labelFilter(tc.serial)
		if err != nil || got != tc.want {
			t.Errorf("labelFilter(%q) = %q, %v; want %q", tc.serial, got, err, tc.want)
			continue
		}
		if in("[sig-x] a [Conformance] [Serial]") != tc.serialIn || in("[sig-x] b [Conformance]") != tc.parallelIn {
			t.Errorf("labelFilter(%q): a serial spec in %v, a parallel one in %v", tc.serial, in("x [Serial]"), in("y"))
		}
	}
	if _, _, err := labelFilter("yes"); err == nil {
		t.Error("labelFilter(\"yes\") is no error")
	}
}

// A run of three [Conformance] specs: two passed, one skipped by name
// (the "ImageVolume" entry of skips).
const greenJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="Kubernetes e2e suite">
  <testcase name="[SynchronizedBeforeSuite]" status="passed" time="1"></testcase>
  <testcase name="[It] [sig-a] A should work [Conformance]" status="passed" time="2"></testcase>
  <testcase name="[It] [sig-b] B should work [Serial] [Conformance]" status="passed" time="3"></testcase>
  <testcase name="[It] [sig-c] ImageVolume should mount [Conformance]" status="skipped" time="0"><skipped message="skipped by --ginkgo.skip"></skipped></testcase>
  <testcase name="[It] [sig-d] not conformance" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
</testsuite></testsuites>`

// The harness fails a run on each way it could look green by accident:
// the suite's exit code, a spec missing from the report or not in the
// suite's list, a skip the skip list does not name, nothing passed.
func TestProblems(t *testing.T) {
	list := []string{"[sig-a] A should work [Conformance]", "[sig-b] B should work [Serial] [Conformance]", "[sig-c] ImageVolume should mount [Conformance]"}
	skips := map[string]string{"ImageVolume should mount": "its image cannot be built here"}
	conformance := func(n string) bool { return strings.Contains(n, "[Conformance]") }
	report := func(t *testing.T, data string, selected func(string) bool) Summary {
		s, err := Summarize([]byte(data), selected)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name     string
		junit    string
		list     []string
		selected func(string) bool
		skips    map[string]string
		exit     error
		want     []string // a part of each problem, in order
	}{
		{name: "green", junit: greenJUnit, list: list, selected: conformance, skips: skips},
		{name: "a focus selects part of the list", junit: greenJUnit, list: list,
			selected: func(n string) bool { return conformance(n) && !strings.Contains(n, "[Serial]") }, skips: skips},
		{name: "the suite exited non-zero", junit: greenJUnit, list: list, selected: conformance, skips: skips,
			exit: errors.New("exit status 1"), want: []string{"the suite exited with exit status 1 with no spec failed: a crashed or interrupted process"}},
		{name: "the suite exited non-zero because a spec failed", junit: strings.Replace(greenJUnit,
			`<testcase name="[It] [sig-a] A should work [Conformance]" status="passed" time="2"></testcase>`,
			`<testcase name="[It] [sig-a] A should work [Conformance]" status="failed" time="2"><failure type="failed">x</failure></testcase>`, 1),
			list: list, selected: conformance, skips: skips, exit: errors.New("exit status 1"), want: []string{"the suite exited with exit status 1 (1 failed)"}},
		{name: "a spec of the list is not in the report (a crashed process)", junit: greenJUnit,
			list: append(slices.Clone(list), "[sig-e] E should work [Conformance]"), selected: conformance, skips: skips,
			want: []string{"= 3 specs, want the 4 the suite's conformance.yaml selects; not in the report: [sig-e] E should work [Conformance]; not in conformance.yaml: none"}},
		{name: "a spec of the report is not in the list", junit: greenJUnit, list: list[:2], selected: conformance, skips: skips,
			want: []string{"not in conformance.yaml: [sig-c] ImageVolume should mount [Conformance]"}},
		{name: "a skip the skip list does not name", junit: greenJUnit, list: list, selected: conformance, skips: map[string]string{},
			want: []string{"skipped, and skips.go does not name it: [sig-c] ImageVolume should mount [Conformance] (skipped by --ginkgo.skip)"}},
		{name: "nothing passed", junit: `<testsuites><testsuite>
  <testcase name="[It] [sig-c] ImageVolume should mount [Conformance]" status="skipped" time="0"><skipped message="x"></skipped></testcase>
</testsuite></testsuites>`, list: list[2:], selected: conformance, skips: skips, want: []string{"no spec passed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Problems(report(t, tc.junit, tc.selected), tc.list, tc.selected, tc.skips, tc.exit)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d of them (%q)", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestReadConformanceList(t *testing.T) {
	dir := t.TempDir()
	write := func(data string) string {
		f := filepath.Join(dir, "conformance.yaml")
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	names, err := ReadConformanceList(write(`- testname: A
  codename: '[sig-a] A should work
    [Conformance]'
  description: a
- testname: B
  codename: '[sig-b] B should work [Conformance]'
`))
	if err != nil || !slices.Equal(names, []string{"[sig-a] A should work [Conformance]", "[sig-b] B should work [Conformance]"}) {
		t.Errorf("names %q, %v", names, err)
	}
	for _, bad := range []string{"[]", "- testname: A\n", "not: a list"} {
		if _, err := ReadConformanceList(write(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
