// Package mapping is the syncer's name mapping store: which host object each
// synced virtual object became, and which objects each virtual object
// references (a pod's secrets, config maps and claims). The reference index
// decides selective sync: a Secret or ConfigMap is on the host only while
// something synced references it (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync,
// the Ingress example, "tracking references").
//
// The store is held in memory for lookups and written behind to a bbolt file
// in batches, so a restarted syncer starts from what it knew; at start the
// syncer also rebuilds it from both clusters and prunes what is gone.
package mapping

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Ref names a virtual object.
type Ref struct {
	// Kind is the object's kind, e.g. "Secret".
	Kind string `json:"kind"`
	// Namespace is "" for cluster-scoped objects.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String renders r as Kind/namespace/name.
func (r Ref) String() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

type hostKey struct{ kind, name string }

var (
	bucketNames = []byte("names")
	bucketRefs  = []byte("references")
)

// Store is safe for concurrent use. The zero value is not usable: call Open
// or NewMemory.
type Store struct {
	mu        sync.RWMutex
	hostOf    map[Ref]string
	virtualOf map[hostKey]Ref
	refs      map[Ref]map[Ref]struct{}
	refBy     map[Ref]map[Ref]struct{}

	db      *bolt.DB
	pending map[string]*[]byte // bucket/key → value (nil = delete)
	kick    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
}

// NewMemory returns a store that is not persisted.
func NewMemory() *Store {
	return &Store{
		hostOf: map[Ref]string{}, virtualOf: map[hostKey]Ref{},
		refs: map[Ref]map[Ref]struct{}{}, refBy: map[Ref]map[Ref]struct{}{},
	}
}

// Open loads the store persisted at path (created when missing) and starts
// writing changes back to it at most every flushInterval. Close flushes and
// closes the file.
func Open(path string, flushInterval time.Duration) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoFreelistSync: true})
	if err != nil {
		return nil, fmt.Errorf("mapping store %s: %w", path, err)
	}
	s := NewMemory()
	s.db = db
	if err := s.load(); err != nil {
		db.Close()
		return nil, fmt.Errorf("mapping store %s: %w", path, err)
	}
	s.pending = map[string]*[]byte{}
	s.kick = make(chan struct{}, 1)
	s.stop = make(chan struct{})
	s.stopped = make(chan struct{})
	go s.flushLoop(flushInterval)
	return s, nil
}

func (s *Store) load() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		names, err := tx.CreateBucketIfNotExists(bucketNames)
		if err != nil {
			return err
		}
		refs, err := tx.CreateBucketIfNotExists(bucketRefs)
		if err != nil {
			return err
		}
		if err := names.ForEach(func(k, v []byte) error {
			var r Ref
			if err := json.Unmarshal(k, &r); err != nil {
				return err
			}
			s.recordLocked(r, string(v))
			return nil
		}); err != nil {
			return err
		}
		return refs.ForEach(func(k, v []byte) error {
			var from Ref
			var to []Ref
			if err := json.Unmarshal(k, &from); err != nil {
				return err
			}
			if err := json.Unmarshal(v, &to); err != nil {
				return err
			}
			s.setReferencesLocked(from, to)
			return nil
		})
	})
}

// Record notes that virtual object r is synced as the host object hostName.
func (s *Store) Record(r Ref, hostName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hostOf[r] == hostName {
		return
	}
	s.recordLocked(r, hostName)
	s.persist(bucketNames, r, []byte(hostName))
}

func (s *Store) recordLocked(r Ref, hostName string) {
	if old, ok := s.hostOf[r]; ok {
		delete(s.virtualOf, hostKey{r.Kind, old})
	}
	s.hostOf[r] = hostName
	s.virtualOf[hostKey{r.Kind, hostName}] = r
}

// Forget drops the name mapping of r and the references r makes, and
// returns the objects r referenced.
func (s *Store) Forget(r Ref) (dropped []Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.hostOf[r]; ok {
		delete(s.virtualOf, hostKey{r.Kind, old})
		delete(s.hostOf, r)
		s.persist(bucketNames, r, nil)
	}
	if len(s.refs[r]) > 0 {
		dropped = slices.SortedFunc(maps.Keys(s.refs[r]), compareRefs)
		s.setReferencesLocked(r, nil)
		s.persist(bucketRefs, r, nil)
	}
	return dropped
}

// HostName is the host name recorded for r.
func (s *Store) HostName(r Ref) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, ok := s.hostOf[r]
	return n, ok
}

// VirtualOf is the virtual object recorded for the host object of kind named hostName.
func (s *Store) VirtualOf(kind, hostName string) (Ref, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.virtualOf[hostKey{kind, hostName}]
	return r, ok
}

// SetReferences replaces the set of objects from references with to and
// returns the objects newly referenced and those referenced before but not
// now, so the caller can re-check them (sync a Secret, or delete its host copy).
func (s *Store) SetReferences(from Ref, to []Ref) (added, dropped []Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.refs[from]
	next := make(map[Ref]struct{}, len(to))
	for _, t := range to {
		next[t] = struct{}{}
	}
	if maps.Equal(old, next) {
		return nil, nil
	}
	for t := range old {
		if _, ok := next[t]; !ok {
			dropped = append(dropped, t)
		}
	}
	for t := range next {
		if _, ok := old[t]; !ok {
			added = append(added, t)
		}
	}
	s.setReferencesLocked(from, to)
	if len(to) == 0 {
		s.persist(bucketRefs, from, nil)
	} else {
		data, _ := json.Marshal(slices.SortedFunc(maps.Keys(next), compareRefs))
		s.persist(bucketRefs, from, data)
	}
	return added, dropped
}

func (s *Store) setReferencesLocked(from Ref, to []Ref) {
	for t := range s.refs[from] {
		delete(s.refBy[t], from)
		if len(s.refBy[t]) == 0 {
			delete(s.refBy, t)
		}
	}
	delete(s.refs, from)
	if len(to) == 0 {
		return
	}
	set := make(map[Ref]struct{}, len(to))
	for _, t := range to {
		set[t] = struct{}{}
		if s.refBy[t] == nil {
			s.refBy[t] = map[Ref]struct{}{}
		}
		s.refBy[t][from] = struct{}{}
	}
	s.refs[from] = set
}

// IsReferenced reports whether any object references r.
func (s *Store) IsReferenced(r Ref) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.refBy[r]) > 0
}

// ReferencedBy lists the objects that reference r, sorted.
func (s *Store) ReferencedBy(r Ref) []Ref {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.SortedFunc(maps.Keys(s.refBy[r]), compareRefs)
}

// Names lists every virtual object with a recorded host name, sorted.
func (s *Store) Names() []Ref {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.SortedFunc(maps.Keys(s.hostOf), compareRefs)
}

// Referrers lists every object that references something, sorted.
func (s *Store) Referrers() []Ref {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.SortedFunc(maps.Keys(s.refs), compareRefs)
}

func compareRefs(a, b Ref) int {
	if a.Kind != b.Kind {
		return cmpString(a.Kind, b.Kind)
	}
	if a.Namespace != b.Namespace {
		return cmpString(a.Namespace, b.Namespace)
	}
	return cmpString(a.Name, b.Name)
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// persist queues a write; callers hold s.mu.
func (s *Store) persist(bucket []byte, r Ref, value []byte) {
	if s.db == nil {
		return
	}
	k, _ := json.Marshal(r)
	var v *[]byte
	if value != nil {
		v = &value
	}
	s.pending[string(bucket)+"\x00"+string(k)] = v
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Store) flushLoop(interval time.Duration) {
	defer close(s.stopped)
	for {
		select {
		case <-s.stop:
			_ = s.Flush()
			return
		case <-s.kick:
		}
		select {
		case <-s.stop:
			_ = s.Flush()
			return
		case <-time.After(interval):
		}
		_ = s.Flush()
	}
}

// Flush writes queued changes to the file in one transaction.
func (s *Store) Flush() error {
	if s.db == nil {
		return nil
	}
	s.mu.Lock()
	batch := s.pending
	s.pending = map[string]*[]byte{}
	s.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		for key, v := range batch {
			i := slices.Index([]byte(key), 0)
			b := tx.Bucket([]byte(key[:i]))
			k := []byte(key[i+1:])
			var err error
			if v == nil {
				err = b.Delete(k)
			} else {
				err = b.Put(k, *v)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// Close flushes pending writes and closes the file.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	close(s.stop)
	<-s.stopped
	return s.db.Close()
}
