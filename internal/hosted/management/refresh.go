package management

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// lastRead is what the management controller knew of a Cluster's operator
// record when it last read the cloud for it.
type lastRead struct {
	// At is when the cloud was read.
	At time.Time
	// Settled is whether the operator's record was settled then
	// (engine.Settled: active, no push pending).
	Settled bool
	// Generation is the operator object's status.observedGeneration then:
	// the spec it had acted on.
	Generation int64
}

// readDue decides whether a reconcile of a Cluster reads the cloud
// (Reader.Describe, or the operator's reading taken since: Readings) or
// works from the upstream spec its status holds. It
// reads when it never read in this process (ok false), when period has
// passed since the last read, and when the operator's record is settled
// on something it was not at the last read: an update finished (it was
// not settled) or the operator acted on a newer spec (generation) — the
// moment an outside change can be told from clustersync's own push.
// Woken by an edit of the Cluster, or by the operator starting an update,
// it does not read: nothing can be adopted before the operator settles,
// and the operator decides its pushes on its own read of the cloud. Only
// a read adopts outside changes.
func readDue(last lastRead, ok bool, settled bool, generation int64, now time.Time, period time.Duration) bool {
	switch {
	case !ok, now.Sub(last.At) >= period:
		return true
	case !settled:
		return false
	}
	return !last.Settled || generation != last.Generation
}

// reads keeps the lastRead of each Cluster (by UID), for the life of the
// process: after a restart every Cluster is read once.
type reads struct{ m sync.Map }

func (r *reads) get(uid types.UID) (lastRead, bool) {
	v, ok := r.m.Load(uid)
	if !ok {
		return lastRead{}, false
	}
	return v.(lastRead), true
}

func (r *reads) set(uid types.UID, l lastRead) { r.m.Store(uid, l) }

func (r *reads) forget(uid types.UID) { r.m.Delete(uid) }
