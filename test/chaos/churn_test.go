package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// opKind is what one step of the churn does.
type opKind int

const (
	opCreate opKind = iota
	opUpdate
	opDelete
	opHostEdit
)

// Host-side edits of a host copy (op.variant).
const (
	editHostLabel      = iota // set a host label of the host's own (hostKeyPrefix)
	editHostLabelDrop         // remove one
	editHostAnnotation        // set a host annotation of the host's own
	editContestLabel          // set the churn's gen label on the host copy
	editContestNote           // set the churn's note annotation on the host copy
	editTamper                // change what flows virtual → host only: data, ports and selector, image
	editDelete                // delete the host copy (not pods: a host pod deleted is a pod lost, by design)
	numEdits
)

// op is one step of the churn, generated from the seed.
type op struct {
	seq      int
	kind     opKind
	key      key
	gen      int // create, update: the generation to write
	runnable bool
	variant  int // host edits: editHostLabel…
}

// objState is what the churn knows of one name: the object it created last
// and what it wrote to it. Only the worker that owns the name writes it.
type objState struct {
	exists      bool
	uid         types.UID
	gen, inc    int
	runnable    bool
	clusterIP   string      // Services: at creation
	pastUIDs    []types.UID // earlier incarnations
	lost        string      // why the churn found it gone while it should exist
	recreations int         // Services the syncer recreated with the host's cluster IP
}

// churn runs the generated ops against the virtual cluster (and the
// host-side edits against the host), one worker per share of the names so
// that the ops on one name run in the order generated.
type churn struct {
	virtual, host client.Client
	hostName      func(k key) string
	opTimeout     time.Duration
	logf          func(format string, args ...any)

	mu    sync.Mutex
	state map[key]*objState
	// hostValues are the values host-side edits wrote to contested keys,
	// per object.
	hostValues map[key]map[string]bool
	// problems are what the churn saw go wrong, by kind: "lost" (an
	// object gone that should exist), "replaced" (another UID under the
	// name), "resurrected" (an object the churn deleted came back),
	// "error" (an op that failed past its deadline).
	problems map[string][]string

	ops, edits, editsSkipped, errs atomic.Int64
}

func newChurn(virtual, host client.Client, tr translate.Translator, logf func(string, ...any)) *churn {
	return &churn{virtual: virtual, host: host, logf: logf, opTimeout: 4 * time.Minute,
		hostName:   func(k key) string { return tr.HostName(k.name, k.ns) },
		state:      map[key]*objState{},
		hostValues: map[key]map[string]bool{},
		problems:   map[string][]string{},
	}
}

// problem records something the churn saw go wrong, of a kind of
// churn.problems.
func (c *churn) problem(kind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.mu.Lock()
	c.problems[kind] = append(c.problems[kind], msg)
	c.mu.Unlock()
	c.logf("churn: %s: %s", kind, msg)
}

func (c *churn) stateOf(k key) *objState {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state[k]
	if s == nil {
		s = &objState{}
		c.state[k] = s
	}
	return s
}

// snapshot copies the churn's state for the checks.
func (c *churn) snapshot() (map[key]objState, map[key]map[string]bool, map[string][]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := make(map[key]objState, len(c.state))
	for k, s := range c.state {
		st[k] = *s
	}
	hv := make(map[key]map[string]bool, len(c.hostValues))
	for k, m := range c.hostValues {
		hv[k] = make(map[string]bool, len(m))
		for v := range m {
			hv[k][v] = true
		}
	}
	pr := map[string][]string{}
	for k, v := range c.problems {
		pr[k] = append([]string(nil), v...)
	}
	return st, hv, pr
}

// workers starts n workers; each op sent to dispatch runs on the worker
// of its name. wait closes the queues and waits for them to drain.
func (c *churn) workers(ctx context.Context, n int) (dispatch func(op), wait func()) {
	queues := make([]chan op, n)
	var wg sync.WaitGroup
	for i := range queues {
		// Short queues: the generator is never far ahead of the ops
		// done, so a fault comes at its point of the churn.
		queues[i] = make(chan op, 2)
		wg.Add(1)
		go func(q chan op) {
			defer wg.Done()
			for o := range q {
				c.run(ctx, o)
			}
		}(queues[i])
	}
	dispatch = func(o op) {
		h := fnv.New32a()
		h.Write([]byte(o.key.String()))
		queues[h.Sum32()%uint32(n)] <- o
	}
	return dispatch, func() {
		for _, q := range queues {
			close(q)
		}
		wg.Wait()
	}
}

func (c *churn) run(ctx context.Context, o op) {
	c.ops.Add(1)
	var err error
	switch o.kind {
	case opCreate:
		err = c.create(ctx, o)
	case opUpdate:
		err = c.update(ctx, o)
	case opDelete:
		err = c.delete(ctx, o)
	case opHostEdit:
		err = c.hostEdit(ctx, o)
	}
	if err != nil {
		c.errs.Add(1)
		c.problem("error", "op %d (%s of %s): %v", o.seq, [...]string{"create", "update", "delete", "host edit"}[o.kind], o.key, err)
	}
}

// errRetry asks retry for another try.
var errRetry = errors.New("not yet")

// retry calls f every 250 ms until it succeeds, fails with an error
// that waiting does not cure, or timeout passes: the API servers of this
// test go away and come back (control plane pod deleted, host API server
// restarted), and a request to one that is away fails with a timeout, a
// refused connection or a 5xx.
func retry(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = f(ctx)
		switch {
		case last == nil:
			return true, nil
		case errors.Is(last, errRetry) || transient(last):
			return false, nil
		}
		return false, last
	})
	if err != nil && last != nil && !errors.Is(err, last) {
		return fmt.Errorf("%w (last error: %v)", err, last)
	}
	return err
}

// transient tells an error of an API server that is away, starting or
// overloaded from an answer about the object (not found, exists, conflict,
// invalid, forbidden).
func transient(err error) bool {
	switch {
	case apierrors.IsNotFound(err), apierrors.IsAlreadyExists(err), apierrors.IsConflict(err), apierrors.IsInvalid(err),
		apierrors.IsBadRequest(err), apierrors.IsForbidden(err), apierrors.IsMethodNotSupported(err), apierrors.IsUnauthorized(err):
		return false
	}
	return true
}

func (c *churn) create(ctx context.Context, o op) error {
	st := c.stateOf(o.key)
	want := desired(o.key, o.gen, o.seq, o.runnable)
	var created client.Object
	err := retry(ctx, c.opTimeout, func(ctx context.Context) error {
		obj := want.object(o.key, o.runnable)
		err := c.virtual.Create(ctx, obj)
		if err == nil {
			created = obj
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		// Ours, created by an earlier try whose answer was lost; or an
		// earlier incarnation still going away; or one that should not
		// be there at all.
		cur := o.key.kind.newObject()
		if err := c.virtual.Get(ctx, client.ObjectKey{Namespace: o.key.ns, Name: o.key.name}, cur); err != nil {
			return err
		}
		switch {
		case cur.GetAnnotations()[annIncarnation] == strconv.Itoa(o.seq):
			created = cur
			return nil
		case cur.GetDeletionTimestamp() != nil:
			return errRetry
		}
		c.problem("resurrected", "create %s: %s exists with UID %s (incarnation %s), deleted by the churn before: resurrected; deleting it to go on",
			o.key, o.key, cur.GetUID(), cur.GetAnnotations()[annIncarnation])
		c.mu.Lock()
		st.pastUIDs = append(st.pastUIDs, cur.GetUID())
		c.mu.Unlock()
		if err := c.virtual.Delete(ctx, cur); client.IgnoreNotFound(err) != nil {
			return err
		}
		return errRetry
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	*st = objState{exists: true, uid: created.GetUID(), gen: o.gen, inc: o.seq, runnable: o.runnable, pastUIDs: st.pastUIDs}
	if svc, ok := created.(*corev1.Service); ok {
		st.clusterIP = svc.Spec.ClusterIP
	}
	c.mu.Unlock()
	return nil
}

func (c *churn) update(ctx context.Context, o op) error {
	st := c.stateOf(o.key)
	c.mu.Lock()
	exists, inc, runnable := st.exists, st.inc, st.runnable
	c.mu.Unlock()
	if !exists {
		return nil // lost earlier, already reported
	}
	p, err := desired(o.key, o.gen, inc, runnable).patch(o.key)
	if err != nil {
		return err
	}
	var missingSince time.Time
	obj := o.key.kind.newObject()
	err = retry(ctx, c.opTimeout, func(ctx context.Context) error {
		obj.SetName(o.key.name)
		obj.SetNamespace(o.key.ns)
		err := c.virtual.Patch(ctx, obj, p)
		if apierrors.IsNotFound(err) && o.key.kind == serviceKind {
			// The syncer recreates a virtual Service whose cluster IP the
			// host gave to another: gone for a moment.
			if missingSince.IsZero() {
				missingSince = time.Now()
			}
			if time.Since(missingSince) < 30*time.Second {
				return errRetry
			}
		}
		return err
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case apierrors.IsNotFound(err):
		st.exists, st.lost = false, fmt.Sprintf("not found for an update at op %d (gen %d)", o.seq, o.gen)
		c.problems["lost"] = append(c.problems["lost"], fmt.Sprintf("%s: %s", o.key, st.lost))
		return nil
	case err != nil:
		return err
	}
	if obj.GetUID() != st.uid {
		if o.key.kind == serviceKind && obj.GetAnnotations()[annIncarnation] == strconv.Itoa(st.inc) {
			st.recreations++
			st.uid = obj.GetUID()
		} else {
			c.problems["replaced"] = append(c.problems["replaced"], fmt.Sprintf("%s: UID %s, was %s (op %d)", o.key, obj.GetUID(), st.uid, o.seq))
			st.uid = obj.GetUID()
		}
	}
	st.gen = o.gen
	return nil
}

func (c *churn) delete(ctx context.Context, o op) error {
	st := c.stateOf(o.key)
	c.mu.Lock()
	exists, uid, inc := st.exists, st.uid, st.inc
	c.mu.Unlock()
	if !exists {
		return nil
	}
	err := retry(ctx, c.opTimeout, func(ctx context.Context) error {
		obj := o.key.kind.newObject()
		obj.SetName(o.key.name)
		obj.SetNamespace(o.key.ns)
		err := c.virtual.Delete(ctx, obj, client.Preconditions{UID: &uid})
		if apierrors.IsConflict(err) {
			// Another UID: a Service the syncer recreated (same
			// incarnation), else something that is not ours.
			cur := o.key.kind.newObject()
			if err := c.virtual.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
				return err
			}
			if cur.GetAnnotations()[annIncarnation] != strconv.Itoa(inc) {
				return fmt.Errorf("%s has UID %s, incarnation %s; the churn's is %s, incarnation %d", o.key, cur.GetUID(),
					cur.GetAnnotations()[annIncarnation], uid, inc)
			}
			uid = cur.GetUID()
			return errRetry
		}
		return client.IgnoreNotFound(err)
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	st.exists = false
	st.pastUIDs = append(st.pastUIDs, uid)
	c.mu.Unlock()
	if o.key.kind != podKind {
		return nil
	}
	// A pod that ran finishes its deletion through the syncer (it deletes
	// the host pod, then the virtual one): wait, so the name is free for
	// the next create.
	return retry(ctx, c.opTimeout, func(ctx context.Context) error {
		var p corev1.Pod
		err := c.virtual.Get(ctx, client.ObjectKey{Namespace: o.key.ns, Name: o.key.name}, &p)
		if apierrors.IsNotFound(err) || (err == nil && p.UID != uid) {
			return nil
		}
		if err == nil {
			return errRetry
		}
		return err
	})
}

// hostEdit edits the host copy of o.key, if there is one, as a host user
// or controller might while the syncer works on it.
func (c *churn) hostEdit(ctx context.Context, o op) error {
	st := c.stateOf(o.key)
	c.mu.Lock()
	runnable := st.runnable
	c.mu.Unlock()
	name := c.hostName(o.key)
	obj := o.key.kind.newObject()
	if err := retry(ctx, c.opTimeout, func(ctx context.Context) error {
		return c.host.Get(ctx, client.ObjectKey{Namespace: hostNamespace, Name: name}, obj)
	}); apierrors.IsNotFound(err) {
		c.editsSkipped.Add(1) // not synced yet, or already gone
		return nil
	} else if err != nil {
		return err
	}
	if obj.GetLabels()[translate.LabelManagedBy] != vclusterName {
		return fmt.Errorf("host object %s/%s is not a copy of the virtual cluster's", hostNamespace, name)
	}
	value := hostValuePrefix + strconv.Itoa(o.seq)
	slot := strconv.Itoa(o.seq % 3)
	variant := o.variant
	switch {
	case variant == editDelete && o.key.kind == podKind:
		variant = editHostLabel
	case variant == editTamper && o.key.kind == podKind && runnable:
		variant = editHostAnnotation // a new image would restart the container
	}
	body := map[string]any{}
	patchType := types.MergePatchType
	meta := func(field, k string, v any) { body["metadata"] = map[string]any{field: map[string]any{k: v}} }
	switch variant {
	case editHostLabel:
		meta("labels", hostKeyPrefix+"l"+slot, value)
	case editHostLabelDrop:
		meta("labels", hostKeyPrefix+"l"+slot, nil)
	case editHostAnnotation:
		meta("annotations", hostKeyPrefix+"a"+slot, value)
	case editContestLabel, editContestNote:
		k, field := labelGen, "labels"
		if variant == editContestNote {
			k, field = annNote, "annotations"
		}
		// Recorded before it is written: the syncer may carry it to the
		// virtual object as soon as it is.
		c.mu.Lock()
		if c.hostValues[o.key] == nil {
			c.hostValues[o.key] = map[string]bool{}
		}
		c.hostValues[o.key][value] = true
		c.mu.Unlock()
		meta(field, k, value)
	case editTamper:
		switch o.key.kind {
		case secretKind:
			body["data"] = map[string]any{"v": []byte(value), "host-extra": []byte(value)}
		case configMapKind:
			body["data"] = map[string]any{"v": value, "host-extra": value}
		case serviceKind:
			body["spec"] = map[string]any{"ports": []corev1.ServicePort{{Name: "tampered", Protocol: corev1.ProtocolTCP, Port: 9999}},
				"selector": map[string]any{"tampered": value}}
		case podKind:
			patchType = types.StrategicMergePatchType
			body["spec"] = map[string]any{"containers": []map[string]any{{"name": "c", "image": "registry.invalid/tampered:" + value}}}
		}
	case editDelete:
		uid := obj.GetUID()
		c.edits.Add(1)
		return retry(ctx, c.opTimeout, func(ctx context.Context) error {
			err := c.host.Delete(ctx, obj, client.Preconditions{UID: &uid})
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				return nil
			}
			return err
		})
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	c.edits.Add(1)
	return retry(ctx, c.opTimeout, func(ctx context.Context) error {
		target := o.key.kind.newObject()
		target.SetName(name)
		target.SetNamespace(hostNamespace)
		err := c.host.Patch(ctx, target, client.RawPatch(patchType, raw))
		if apierrors.IsNotFound(err) {
			return nil // deleted meanwhile
		}
		return err
	})
}

// generator makes the churn's ops from the seed: which op, on which name,
// at which generation. It keeps its own view of which names exist (what
// it has sent so far), so that the sequence depends on the seed alone.
type generator struct {
	rng        *rand.Rand
	namespaces []string
	pool       int // names per kind and namespace
	maxRunning int // runnable pods alive at once
	seq        int

	live     []key
	index    map[key]int
	gen      map[key]int
	runnable map[key]bool
	running  int
	creates  int
}

func newGenerator(seed uint64, objects, maxRunning int, namespaces []string) *generator {
	// A pool of 80% of the creates per kind and namespace, of which about
	// 60% are alive at the end: names come back after deletes (the UID
	// check: a stale host copy must be replaced), and most creates find a
	// free name.
	pool := max(8, objects*4/5/(int(numKinds)*len(namespaces)))
	return &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), namespaces: namespaces, pool: pool, maxRunning: maxRunning,
		index: map[key]int{}, gen: map[key]int{}, runnable: map[key]bool{}}
}

// next returns the next op.
func (g *generator) next() op {
	g.seq++
	o := op{seq: g.seq}
	r := g.rng.Float64()
	switch {
	case r < 0.40 || len(g.live) < 10:
		if k, ok := g.freeName(); ok {
			o.kind, o.key, o.gen = opCreate, k, 1
			o.runnable = k.kind == podKind && g.running < g.maxRunning && g.rng.IntN(4) == 0
			g.add(k, o.runnable)
			return o
		}
		fallthrough
	case r < 0.70:
		o.kind, o.key = opUpdate, g.pick()
		g.gen[o.key]++
		o.gen = g.gen[o.key]
	case r < 0.85:
		o.kind, o.key = opDelete, g.pick()
		g.remove(o.key)
	default:
		o.kind, o.key, o.variant = opHostEdit, g.pick(), g.rng.IntN(numEdits)
	}
	return o
}

// freeName picks a name of a random kind and namespace that does not
// exist now.
func (g *generator) freeName() (key, bool) {
	k := key{kind: kind(g.rng.IntN(int(numKinds))), ns: g.namespaces[g.rng.IntN(len(g.namespaces))]}
	start := g.rng.IntN(g.pool)
	for i := range g.pool {
		k.name = k.kind.prefix() + "-" + strconv.Itoa((start+i)%g.pool)
		if _, taken := g.index[k]; !taken {
			return k, true
		}
	}
	return key{}, false
}

func (g *generator) pick() key { return g.live[g.rng.IntN(len(g.live))] }

func (g *generator) add(k key, runnable bool) {
	g.index[k] = len(g.live)
	g.live = append(g.live, k)
	g.gen[k] = 1
	g.runnable[k] = runnable
	if runnable {
		g.running++
	}
	g.creates++
}

func (g *generator) remove(k key) {
	i := g.index[k]
	last := g.live[len(g.live)-1]
	g.live[i], g.index[last] = last, i
	g.live = g.live[:len(g.live)-1]
	delete(g.index, k)
	if g.runnable[k] {
		g.running--
	}
	delete(g.runnable, k)
}

// namespaceObjects are the virtual namespaces of the churn.
func namespaceObjects(names []string) []client.Object {
	var out []client.Object
	for _, n := range names {
		out = append(out, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{namespaceLabelKey: n}}})
	}
	return out
}
