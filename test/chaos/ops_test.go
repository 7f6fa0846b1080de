package chaos

import (
	"os"
	"testing"
)

// TestChaosOps prints the ops the churn of CLUSTERSYNC_CHAOS_SEED (and
// CLUSTERSYNC_CHAOS_OBJECTS) sends for one object,
// CLUSTERSYNC_CHAOS_KEY (e.g. "Service chaos-b/svc-13", as the reports
// name objects), and where the faults come: the sequence behind a
// reported object, to reproduce it. It needs no cluster.
func TestChaosOps(t *testing.T) {
	want := os.Getenv("CLUSTERSYNC_CHAOS_KEY")
	if want == "" {
		t.Skip(`set CLUSTERSYNC_CHAOS_KEY (e.g. "Pod chaos-a/pod-3") and CLUSTERSYNC_CHAOS_SEED`)
	}
	p := readParams(t)
	if os.Getenv("CLUSTERSYNC_CHAOS_SEED") == "" {
		t.Fatal("set CLUSTERSYNC_CHAOS_SEED")
	}
	g := newGenerator(p.seed, p.objects, p.maxRunning, []string{"chaos-a", "chaos-b", "chaos-c"})
	plan := planFaults(faultRand(p.seed), p.objects, p.syncerKills, p.podDeletes, p.apiserverRestarts)
	next := 0
	for g.creates < p.objects {
		o := g.next()
		if o.key.String() == want {
			t.Logf("op %d (after %d creates): %s gen=%d runnable=%v host-edit=%d", o.seq, g.creates,
				[...]string{"create", "update", "delete", "host edit"}[o.kind], o.gen, o.runnable, o.variant)
		}
		for next < len(plan) && g.creates >= plan[next].atCreate {
			t.Logf("op %d (after %d creates): fault: %s", o.seq, g.creates, plan[next].kind)
			next++
		}
	}
}
