package engine

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Reading is one read of a cluster in the cloud, and when it was taken.
type Reading[S any] struct {
	Upstream[S]
	// At is when the cloud was read (the operator's clock).
	At time.Time
}

// Readings hold the operator's latest reading of each of its objects for
// the management controller of the same cloud in the same process
// (management.Controllers makes one per cloud), so that one read of the
// cloud serves both halves: a pass that pushes reads the cloud anyway
// (Session.Observe), and the management controller takes that reading as
// its refresh instead of reading again. Keyed by the operator object's
// UID; values are copies. The zero value is ready; a nil *Readings keeps
// nothing. Safe for concurrent use.
type Readings[S any] struct {
	m sync.Map
}

// Put records r as the latest reading of the object with uid.
func (rs *Readings[S]) Put(uid types.UID, r Reading[S]) {
	if rs == nil {
		return
	}
	r.Spec = managed.Copy(r.Spec)
	rs.m.Store(uid, r)
}

// Since returns the latest reading of the object with uid when it was
// taken after t; ok is false for none.
func (rs *Readings[S]) Since(uid types.UID, t time.Time) (r Reading[S], ok bool) {
	if rs == nil {
		return r, false
	}
	v, ok := rs.m.Load(uid)
	if !ok {
		return r, false
	}
	r = v.(Reading[S])
	if !r.At.After(t) {
		return Reading[S]{}, false
	}
	r.Spec = managed.Copy(r.Spec)
	return r, true
}

// Forget drops the reading of the object with uid (it is being deleted).
func (rs *Readings[S]) Forget(uid types.UID) {
	if rs != nil {
		rs.m.Delete(uid)
	}
}
