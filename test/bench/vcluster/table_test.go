package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/clustersync/clustersync/test/bench/internal/podstats"
)

func TestPercentiles(t *testing.T) {
	t0 := time.Unix(0, 0)
	created, seen := map[string]time.Time{}, map[string]time.Time{}
	for i := range 100 {
		n := string(rune('a'+i/26)) + string(rune('a'+i%26))
		created[n] = t0
		seen[n] = t0.Add(time.Duration(i+1) * time.Millisecond)
	}
	p50, p99 := percentiles(created, seen)
	if p50 != 50*time.Millisecond || p99 != 99*time.Millisecond {
		t.Errorf("percentiles of 1..100 ms = %s, %s; want 50ms, 99ms", p50, p99)
	}
	if p50, p99 := percentiles(map[string]time.Time{}, seen); p50 != 0 || p99 != 0 {
		t.Errorf("percentiles of nothing = %s, %s; want 0, 0", p50, p99)
	}
}

func TestRowsTargets(t *testing.T) {
	mib := func(n uint64) footprint { return footprint{ControlPlane: podstats.Sample{WorkingSet: n << 20}} }
	vc := figures{APIReady: 20 * time.Second, Idle: mib(500), Loaded: mib(600), SyncRate: 100, CPUPerObject: 4 * time.Millisecond}
	for _, tc := range []struct {
		name   string
		cs, vc figures
		met    map[string]bool
	}{
		{"all met", figures{APIReady: 9 * time.Second, Idle: mib(250), Loaded: mib(480), SyncRate: 300, CPUPerObject: 4 * time.Millisecond}, vc,
			map[string]bool{"create → API ready (s)": true, "memory idle, with its kube-system pods (MiB)": true, "memory loaded, with its kube-system pods (MiB)": true,
				"sync of 1000 Secrets (objects/s)": true, "CPU per synced object (ms)": true}},
		{"all missed", figures{APIReady: 11 * time.Second, Idle: mib(301), Loaded: mib(481), SyncRate: 299, CPUPerObject: 5 * time.Millisecond}, vc,
			map[string]bool{"create → API ready (s)": false, "memory idle, with its kube-system pods (MiB)": false, "memory loaded, with its kube-system pods (MiB)": false,
				"sync of 1000 Secrets (objects/s)": false, "CPU per synced object (ms)": false}},
		// Under 256 MiB but over 0.6 × vCluster's 400.
		{"idle over the ratio", figures{Idle: mib(250)}, figures{Idle: mib(400)}, map[string]bool{"memory idle, with its kube-system pods (MiB)": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range rows(tc.cs, tc.vc, load{Secrets: 1000, Replicas: 100}) {
				if want, ok := tc.met[r.Figure]; ok && r.Met != want {
					t.Errorf("%s: met = %v, want %v (clustersync %v, vCluster %v)", r.Figure, r.Met, want, r.CS, r.VC)
				}
				if _, ok := tc.met[r.Figure]; ok && r.Target == "" {
					t.Errorf("%s has no target", r.Figure)
				}
			}
		})
	}
	var out bytes.Buffer
	printTable(&out, rows(vc, vc, load{Secrets: 1000, Replicas: 100}), "clustersync", "vCluster")
	if !strings.Contains(out.String(), "1.00") || !strings.Contains(out.String(), "missed") {
		t.Errorf("table:\n%s", out.String())
	}
}
