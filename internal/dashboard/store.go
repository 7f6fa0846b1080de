package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// SessionSecretType is the type of the Secrets the dashboard keeps its
// sessions in, one a signed-in user, in the manager's namespace
// (Options.SessionNamespace).
const SessionSecretType corev1.SecretType = "clustersync.io/session"

// SessionLabel is on every session Secret: `kubectl delete secret -n
// NAMESPACE -l clustersync.io/session` signs everyone out.
const SessionLabel = "clustersync.io/session"

// Annotations of a session Secret: the user the API server named at
// sign-in (name, UID, groups as a JSON list), and when the session ends
// (RFC 3339, UTC).
const (
	SessionUserAnnotation    = "clustersync.io/user"
	SessionUIDAnnotation     = "clustersync.io/uid"
	SessionGroupsAnnotation  = "clustersync.io/groups"
	SessionExpiresAnnotation = "clustersync.io/expires"
)

// The data keys of a session Secret: the user's credential (a bearer token,
// or a client certificate and its key, PEM) and the session's CSRF token.
const (
	sessionToken = "token"
	sessionCert  = corev1.TLSCertKey
	sessionKey   = corev1.TLSPrivateKeyKey
	sessionCSRF  = "csrf"
)

// goneFor is how long a replica remembers a session Secret it saw deleted,
// so that a read that raced the deletion does not bring the session back.
const goneFor = time.Minute

// deleteTimeout bounds the deletion of a session Secret.
const deleteTimeout = 10 * time.Second

// record is what a session Secret holds.
type record struct {
	identity
	csrf    string
	expires time.Time
	cred    credential
}

// sessionSecretName is the name of the Secret of session id (the cookie's
// value): "session-" and 40 hex digits of its SHA-256, so that neither the
// name nor anything else stored holds the cookie.
func sessionSecretName(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "session-" + hex.EncodeToString(sum[:20])
}

// secret is rec as the Secret name of namespace ns.
func (rec record) secret(ns, name string) *corev1.Secret {
	data := map[string][]byte{sessionCSRF: []byte(rec.csrf)}
	groups, _ := json.Marshal(rec.groups) // a []string always marshals
	if rec.cred.token != "" {
		data[sessionToken] = []byte(rec.cred.token)
	} else {
		data[sessionCert], data[sessionKey] = rec.cred.cert, rec.cred.certKey
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{SessionLabel: "true"},
			Annotations: map[string]string{SessionUserAnnotation: rec.name, SessionUIDAnnotation: rec.uid, SessionGroupsAnnotation: string(groups),
				SessionExpiresAnnotation: rec.expires.UTC().Format(time.RFC3339)}},
		Type: SessionSecretType,
		Data: data,
	}
}

// recordOf reads a session Secret; the error names what it lacks.
func recordOf(sec *corev1.Secret) (record, error) {
	if sec.Type != SessionSecretType {
		return record{}, fmt.Errorf("Secret %s/%s is of type %q, not %s", sec.Namespace, sec.Name, sec.Type, SessionSecretType)
	}
	expires, err := time.Parse(time.RFC3339, sec.Annotations[SessionExpiresAnnotation])
	if err != nil {
		return record{}, fmt.Errorf("Secret %s/%s: annotation %s: %w", sec.Namespace, sec.Name, SessionExpiresAnnotation, err)
	}
	rec := record{identity: identity{name: sec.Annotations[SessionUserAnnotation], uid: sec.Annotations[SessionUIDAnnotation]},
		csrf: string(sec.Data[sessionCSRF]), expires: expires,
		cred: credential{token: string(sec.Data[sessionToken]), cert: sec.Data[sessionCert], certKey: sec.Data[sessionKey]}}
	if g := sec.Annotations[SessionGroupsAnnotation]; g != "" {
		if err := json.Unmarshal([]byte(g), &rec.groups); err != nil {
			return record{}, fmt.Errorf("Secret %s/%s: annotation %s: %w", sec.Namespace, sec.Name, SessionGroupsAnnotation, err)
		}
	}
	switch {
	case rec.csrf == "":
		return record{}, fmt.Errorf("Secret %s/%s has no %s", sec.Namespace, sec.Name, sessionCSRF)
	case rec.cred.token == "" && (len(rec.cred.cert) == 0 || len(rec.cred.certKey) == 0):
		return record{}, fmt.Errorf("Secret %s/%s has neither %s nor %s and %s", sec.Namespace, sec.Name, sessionToken, sessionCert, sessionKey)
	}
	return rec, nil
}

// sessions are the signed-in users, kept where every replica of the
// manager reads them and a restart does not lose them: one Secret each
// (record.secret) in namespace ns, written and read with the manager's
// identity. The browser holds only the session's random ID. Each replica
// keeps the sessions it has served in memory with their clients, and
// forgets one as soon as its informer reports the Secret gone: signed out
// on another replica, or deleted by an administrator.
type sessions struct {
	ns   string
	kube kubernetes.Interface
	// open makes a session's clients (Server.openSession).
	open func(name string, rec record) (*session, error)

	// secrets lists the session Secrets from the informer's cache; nil
	// until start.
	secrets corelisters.SecretNamespaceLister

	mu   sync.Mutex
	live map[string]*session  // by Secret name
	gone map[string]time.Time // Secret names seen deleted, and when
}

// start runs the informer of the session Secrets until ctx ends and waits
// for its first list. It fails when namespace ns is missing, with the
// command that makes it.
func (ss *sessions) start(ctx context.Context) error {
	if _, err := ss.kube.CoreV1().Namespaces().Get(ctx, ss.ns, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("dashboard: the namespace sessions are kept in, %s, does not exist (kubectl create namespace %s)", ss.ns, ss.ns)
		}
		return fmt.Errorf("dashboard: namespace %s: %w", ss.ns, err)
	}
	f := informers.NewSharedInformerFactoryWithOptions(ss.kube, 0, informers.WithNamespace(ss.ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = SessionLabel }))
	inf := f.Core().V1().Secrets()
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if sec, ok := obj.(*corev1.Secret); ok {
				ss.forget(sec.Name)
			}
		},
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("dashboard: the cache of %v did not sync", typ)
		}
	}
	ss.mu.Lock()
	ss.secrets = inf.Lister().Secrets(ss.ns)
	ss.mu.Unlock()
	return nil
}

// save writes the Secret of a new session id.
func (ss *sessions) save(ctx context.Context, id string, rec record) error {
	_, err := ss.kube.CoreV1().Secrets(ss.ns).Create(ctx, rec.secret(ss.ns, sessionSecretName(id)), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("keep the session in namespace %s: %w", ss.ns, err)
	}
	return nil
}

// keep opens the session of rec, kept in Secret name, and remembers it on
// this replica; a Secret seen deleted is not brought back.
func (ss *sessions) keep(name string, rec record) (*session, error) {
	sess, err := ss.open(name, rec)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, gone := ss.gone[name]; gone {
		sess.end()
		return nil, nil
	}
	if old := ss.live[name]; old != nil {
		old.end()
	}
	ss.live[name] = sess
	return sess, nil
}

// load returns session id: from this replica's memory, else from its
// Secret (from the informer's cache, else read: a session another replica
// has just started may not be in the cache yet). It returns nil, nil when
// there is no such session or it has expired at now.
func (ss *sessions) load(ctx context.Context, id string, now time.Time) (*session, error) {
	name := sessionSecretName(id)
	ss.mu.Lock()
	sess, lister := ss.live[name], ss.secrets
	ss.mu.Unlock()
	if sess != nil {
		if !now.Before(sess.expires) {
			ss.forget(name)
			return nil, nil
		}
		return sess, nil
	}
	var sec *corev1.Secret
	var err error
	if lister != nil {
		sec, err = lister.Get(name)
	}
	if lister == nil || apierrors.IsNotFound(err) {
		sec, err = ss.kube.CoreV1().Secrets(ss.ns).Get(ctx, name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	rec, err := recordOf(sec)
	if err != nil {
		return nil, err
	}
	if !now.Before(rec.expires) {
		return nil, nil
	}
	return ss.keep(name, rec)
}

// delete ends session Secret name everywhere: this replica forgets it at
// once, the others when their informers see its Secret deleted.
// ctx may be a request of the session itself, which ends as soon as the
// informer reports the deletion, maybe before the API server's answer:
// the deletion is not cancelled with it (it is bounded by deleteTimeout).
func (ss *sessions) delete(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	err := ss.kube.CoreV1().Secrets(ss.ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("end the session (Secret %s/%s): %w", ss.ns, name, err)
	}
	ss.forget(name)
	return nil
}

// forget ends session Secret name on this replica: its context is
// cancelled, so its live updates stop.
func (ss *sessions) forget(name string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if sess := ss.live[name]; sess != nil {
		sess.end()
		delete(ss.live, name)
	}
	ss.gone[name] = time.Now()
}

// deleteExpired deletes the Secrets of sessions that expired by now (and
// any session Secret that cannot be read), as the informer lists them;
// failures are logged, the next sign-in tries again.
func (ss *sessions) deleteExpired(ctx context.Context, now time.Time) {
	ss.mu.Lock()
	lister := ss.secrets
	for name, at := range ss.gone {
		if time.Since(at) > goneFor {
			delete(ss.gone, name)
		}
	}
	ss.mu.Unlock()
	if lister == nil {
		return
	}
	all, err := lister.List(labels.Everything())
	if err != nil {
		log.Printf("dashboard: list sessions: %v", err)
		return
	}
	for _, sec := range all {
		rec, err := recordOf(sec)
		if err == nil && now.Before(rec.expires) {
			continue
		}
		if err := ss.delete(ctx, sec.Name); err != nil && !errors.Is(err, context.Canceled) {
			log.Printf("dashboard: %v", err)
		}
	}
}
