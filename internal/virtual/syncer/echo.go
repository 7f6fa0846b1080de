package syncer

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// echoes remembers the object versions the syncer itself wrote, so that the
// watch event each write comes back as does not trigger a reconcile that
// would only find the pair in sync: half the reconciles of a steady sync.
// Only exact versions are matched (UID and resourceVersion), so a change by
// anyone else, even right after ours, is always seen.
//
// It also tells when a cached object is older than the syncer's own last
// write of it (behind): merging such a read against the state that write
// recorded would take the keys the write added for deletions by someone
// else, and the write's own event, being an echo, would never come to set
// it right.
type echoes struct {
	m      sync.Map // "uid/resourceVersion" → time written
	latest sync.Map // uid → lastWrite whose watch event has not come back yet
	writes atomic.Uint64
}

// lastWrite is the newest version of an object the syncer wrote.
type lastWrite struct {
	rv string
	at time.Time
}

// behindFor bounds how long a read older than the syncer's last write is
// taken as stale: the write's event comes back through the watch, and a
// relist brings a version at least as new. Resource versions are compared
// as integers (k8s.io/apimachinery/pkg/util/resourceversion, which
// Kubernetes documents as comparable for objects of one resource:
// https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions);
// a watch event can then take long (a loaded machine delayed one past 3
// seconds, and the merge took the keys the write added for deletions) and
// the read is still known to be old. Where they are not integers (an
// aggregated API server's), any version but the written one counts as
// older, for behindForOpaque.
const (
	behindFor       = time.Minute
	behindForOpaque = 3 * time.Second
)

// echoTTL bounds how long an unconsumed entry is kept (its event may never
// come, e.g. across a watch relist).
const echoTTL = 2 * time.Minute

func echoKey(o client.Object) string { return string(o.GetUID()) + "/" + o.GetResourceVersion() }

// note records that obj, as returned by the API server, was written by us.
func (e *echoes) note(obj client.Object) {
	if obj.GetResourceVersion() == "" {
		return
	}
	now := time.Now()
	e.m.Store(echoKey(obj), now)
	e.latest.Store(obj.GetUID(), lastWrite{rv: obj.GetResourceVersion(), at: now})
	if e.writes.Add(1)%4096 == 0 {
		e.m.Range(func(k, v any) bool {
			if now.Sub(v.(time.Time)) > echoTTL {
				e.m.Delete(k)
			}
			return true
		})
	}
}

// consume reports whether obj is the echo of one of our writes, forgetting it.
func (e *echoes) consume(obj client.Object) bool {
	_, ok := e.m.LoadAndDelete(echoKey(obj))
	if lw, found := e.latest.Load(obj.GetUID()); found && lw.(lastWrite).rv == obj.GetResourceVersion() {
		e.latest.CompareAndDelete(obj.GetUID(), lw)
	}
	return ok
}

// behind reports whether obj, as read from a cache, is older than the
// syncer's last write of it (whose event has not been seen yet), for at
// most behindFor after that write (behindForOpaque when the versions are
// not comparable).
func (e *echoes) behind(obj client.Object, now time.Time) bool {
	lw, found := e.latest.Load(obj.GetUID())
	if !found {
		return false
	}
	w := lw.(lastWrite)
	older, window := w.rv != obj.GetResourceVersion(), behindForOpaque
	if c, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), w.rv); err == nil {
		older, window = c < 0, behindFor
	}
	if !older || now.Sub(w.at) > window {
		e.latest.CompareAndDelete(obj.GetUID(), lw)
		return false
	}
	return true
}

// notEcho is a predicate dropping create and update events of our own writes.
func (e *echoes) notEcho() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(ev event.CreateEvent) bool { return !e.consume(ev.Object) },
		UpdateFunc:  func(ev event.UpdateEvent) bool { return !e.consume(ev.ObjectNew) },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return true },
	}
}
