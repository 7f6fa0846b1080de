package management

import (
	"testing"
	"time"
)

func TestReadDue(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	period := 300 * time.Second
	settledAt := lastRead{At: t0, Settled: true, Generation: 3}
	busyAt := lastRead{At: t0, Settled: false, Generation: 3}
	for _, tc := range []struct {
		name       string
		last       lastRead
		ok         bool
		settled    bool
		generation int64
		now        time.Time
		want       bool
	}{
		{"never read in this process", lastRead{}, false, true, 3, t0, true},
		{"the period passed", settledAt, true, true, 3, t0.Add(period), true},
		{"the period passed while the operator is busy", busyAt, true, false, 3, t0.Add(period), true},
		{"woken by an edit: the operator has not acted on it", settledAt, true, true, 3, t0.Add(time.Second), false},
		{"woken by the operator starting the update", settledAt, true, false, 4, t0.Add(2 * time.Second), false},
		{"the update finished", busyAt, true, true, 4, t0.Add(time.Minute), true},
		{"settled on a newer spec with no update to wait for", settledAt, true, true, 4, t0.Add(time.Second), true},
		{"still busy", busyAt, true, false, 4, t0.Add(time.Minute), false},
	} {
		if got := readDue(tc.last, tc.ok, tc.settled, tc.generation, tc.now, period); got != tc.want {
			t.Errorf("%s: readDue = %v, want %v", tc.name, got, tc.want)
		}
	}
}
