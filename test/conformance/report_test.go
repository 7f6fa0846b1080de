package conformance

import (
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
