package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/clustersync/clustersync/test/bench/internal/podstats"
)

// row is one line of the table: a figure of both subjects and, where
// issue 37 sets one, its target for clustersync.
type row struct {
	// Figure names the figure and its unit, e.g. "create → API ready (s)".
	Figure string
	// CS and VC are clustersync's and vCluster's figures.
	CS, VC float64
	// Format prints a figure, e.g. "%.1f".
	Format string
	// Target is the target in words ("" for none) and Met tells whether
	// clustersync meets it.
	Target string
	Met    bool
}

// rows are the table's rows of clustersync's figures cs and vCluster's vc,
// with issue 37's targets.
func rows(cs, vc figures, l load) []row {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	s := func(d time.Duration) float64 { return d.Seconds() }
	idleCS, idleVC := podstats.MiB(cs.Idle.Total()), podstats.MiB(vc.Idle.Total())
	loadCS, loadVC := podstats.MiB(cs.Loaded.Total()), podstats.MiB(vc.Loaded.Total())
	return []row{
		{Figure: "create → API ready (s)", CS: s(cs.APIReady), VC: s(vc.APIReady), Format: "%.1f",
			Target: "≤ 10 s and ≤ vCluster", Met: s(cs.APIReady) <= 10 && cs.APIReady <= vc.APIReady},
		{Figure: "create → first pod Running (s)", CS: s(cs.FirstPod), VC: s(vc.FirstPod), Format: "%.1f"},
		{Figure: "memory idle, control plane pod (MiB)", CS: podstats.MiB(cs.Idle.ControlPlane.WorkingSet), VC: podstats.MiB(vc.Idle.ControlPlane.WorkingSet), Format: "%.0f"},
		{Figure: "memory idle, with its kube-system pods (MiB)", CS: idleCS, VC: idleVC, Format: "%.0f",
			Target: "≤ 256 MiB and ≤ 0.6 × vCluster", Met: idleCS <= 256 && idleCS <= 0.6*idleVC},
		{Figure: "memory loaded, control plane pod (MiB)", CS: podstats.MiB(cs.Loaded.ControlPlane.WorkingSet), VC: podstats.MiB(vc.Loaded.ControlPlane.WorkingSet), Format: "%.0f"},
		{Figure: "memory loaded, with its kube-system pods (MiB)", CS: loadCS, VC: loadVC, Format: "%.0f",
			Target: "≤ 0.8 × vCluster", Met: loadCS <= 0.8*loadVC},
		{Figure: "CPU idle, control plane pod (millicores)", CS: 1000 * cs.IdleCPU, VC: 1000 * vc.IdleCPU, Format: "%.0f"},
		{Figure: fmt.Sprintf("sync of %d Secrets (objects/s)", l.Secrets), CS: cs.SyncRate, VC: vc.SyncRate, Format: "%.0f",
			Target: "≥ 3 × vCluster", Met: cs.SyncRate >= 3*vc.SyncRate},
		{Figure: "create → host copy p50 (ms)", CS: ms(cs.P50), VC: ms(vc.P50), Format: "%.0f"},
		{Figure: "create → host copy p99 (ms)", CS: ms(cs.P99), VC: ms(vc.P99), Format: "%.0f"},
		{Figure: "CPU per synced object (ms)", CS: ms(cs.CPUPerObject), VC: ms(vc.CPUPerObject), Format: "%.2f",
			Target: "≤ vCluster", Met: cs.CPUPerObject <= vc.CPUPerObject},
		{Figure: fmt.Sprintf("%d-replica Deployment → all ready (s)", l.Replicas), CS: s(cs.Deployment), VC: s(vc.Deployment), Format: "%.1f"},
	}
}

// printTable writes rows as an aligned table headed by the two subjects'
// titles, with the ratio clustersync / vCluster and the target.
func printTable(w io.Writer, rs []row, cs, vc string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  figure\t%s\t%s\tratio\ttarget\n", cs, vc)
	for _, r := range rs {
		ratio := "-"
		if r.VC != 0 {
			ratio = fmt.Sprintf("%.2f", r.CS/r.VC)
		}
		target := ""
		if r.Target != "" {
			target = r.Target + ": " + map[bool]string{true: "met", false: "missed"}[r.Met]
		}
		fmt.Fprintf(tw, "  %s\t"+r.Format+"\t"+r.Format+"\t%s\t%s\n", r.Figure, r.CS, r.VC, ratio, strings.TrimSpace(target))
	}
	_ = tw.Flush()
}
