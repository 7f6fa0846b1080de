package syncer

import (
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// echoes remembers the object versions the syncer itself wrote, so that the
// watch event each write comes back as does not trigger a reconcile that
// would only find the pair in sync: half the reconciles of a steady sync.
// Only exact versions are matched (UID and resourceVersion), so a change by
// anyone else, even right after ours, is always seen.
type echoes struct {
	m      sync.Map // "uid/resourceVersion" → time written
	writes atomic.Uint64
}

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
	return ok
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
