// Package registry is clustersync's local OCI registry: the one the local
// host's container runtime pulls clustersync's images from (nothing can be
// pulled from public registries on the machines it is developed on). It is
// go-containerregistry's registry (pkg/registry) served over plain HTTP on
// loopback (and read-only on the real node's address, for its pods), with
// blobs on disk; since that registry keeps manifests in
// memory only, every manifest pushed is also appended to a journal and
// pushed again at start, so images survive a restart.
//
// State folder layout: blobs/ (sha256 blobs), manifests.jsonl (the
// journal), status.json (pid and address while it serves), registry.log.
package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/clustersync/clustersync/internal/proc"
)

// entry is one line of the manifest journal.
type entry struct {
	// Path is the request path, /v2/<repository>/manifests/<reference>.
	Path        string `json:"path"`
	ContentType string `json:"contentType"`
	Body        []byte `json:"body"`
}

// Handler returns the registry's HTTP handler with its state in dir
// (created if missing), after replaying the manifest journal. Errors name
// a journal line that cannot be replayed.
func Handler(dir string, logger *log.Logger) (http.Handler, error) {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o700); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	inner := ggcr.New(ggcr.WithBlobHandler(ggcr.NewDiskBlobHandler(filepath.Join(dir, "blobs"))), ggcr.Logger(logger))
	j := &journal{file: filepath.Join(dir, "manifests.jsonl"), inner: inner}
	if err := j.replay(); err != nil {
		return nil, err
	}
	return j, nil
}

// journal records the manifests pushed to inner.
type journal struct {
	file  string
	inner http.Handler
	mu    sync.Mutex
}

func isManifestPut(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/v2/") && strings.Contains(r.URL.Path, "/manifests/")
}

// ServeHTTP passes every request to the registry and journals the manifest
// pushes it accepts.
func (j *journal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isManifestPut(r) {
		j.inner.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &statusRecorder{ResponseWriter: w}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.inner.ServeHTTP(rec, r)
	if rec.status/100 != 2 {
		return
	}
	line, _ := json.Marshal(entry{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: body})
	f, err := os.OpenFile(j.file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		_, err = f.Write(append(line, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		log.Printf("registry: journal %s: %v (the manifest is served until the registry stops)", j.file, err)
	}
}

// replay pushes the journal's manifests into inner, in order.
func (j *journal) replay() error {
	f, err := os.Open(j.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("registry: %s line %d: %w", j.file, n, err)
		}
		req := httptest.NewRequest(http.MethodPut, e.Path, bytes.NewReader(e.Body))
		req.Header.Set("Content-Type", e.ContentType)
		rec := httptest.NewRecorder()
		j.inner.ServeHTTP(rec, req)
		if rec.Code/100 != 2 {
			return fmt.Errorf("registry: %s line %d (%s): %d %s", j.file, n, e.Path, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
	return sc.Err()
}

// statusRecorder remembers the status code a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader records code and passes it on.
func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200 and passes b on.
func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Status is what a serving registry records in its state folder.
type Status struct {
	// PID is the serving process.
	PID int `json:"pid"`
	// Addr is host:port, e.g. 127.0.0.1:5001.
	Addr string `json:"addr"`
	// PodAddr is where the node's pods pull from (read-only), e.g.
	// 10.244.0.1:5001; "" when not served.
	PodAddr string `json:"podAddr,omitempty"`
}

func statusFile(dir string) string { return filepath.Join(dir, "status.json") }

// LogFile is the log of a registry started with Launch.
func LogFile(dir string) string { return filepath.Join(dir, "registry.log") }

// Serve serves the registry of state folder dir on addr (host:port; port 0
// picks a free one) until ctx ends, recording its pid and address in
// status.json while it serves (removed when it stops). When podAddr is not
// "", it also serves pulls (GET and HEAD only) on podAddr, the real node's
// address that its pods reach (e.g. 10.244.0.1:PORT), so that a pod can
// fetch an artifact (a chart of experimental.deploy) while only this machine
// can push; that address exists once the node's bridge does, which comes
// after the registry starts, so it is bound as soon as it can be (tried
// every second).
func Serve(ctx context.Context, dir, addr, podAddr string) error {
	h, err := Handler(dir, log.New(os.Stderr, "registry: ", log.LstdFlags))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("registry: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	pods := &http.Server{Handler: readOnly(h), ReadHeaderTimeout: 30 * time.Second}
	st, _ := json.Marshal(Status{PID: os.Getpid(), Addr: ln.Addr().String(), PodAddr: podAddr})
	if err := os.WriteFile(statusFile(dir), st, 0o600); err != nil {
		ln.Close()
		return err
	}
	defer os.Remove(statusFile(dir))
	errs := make(chan error, 2)
	go func() { errs <- srv.Serve(ln) }()
	log.Printf("registry: serving %s on http://%s", dir, ln.Addr())
	if podAddr != "" {
		go func() {
			var pln net.Listener
			_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
				var err error
				pln, err = net.Listen("tcp", podAddr)
				return err == nil, nil
			})
			if pln == nil {
				return
			}
			log.Printf("registry: serving pulls for the node's pods on http://%s", podAddr)
			if err := pods.Serve(pln); !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		}()
	}
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
		// Pulls in progress get 5 seconds; connections still open then
		// (a client's idle keep-alive counts as new for 5 seconds) are
		// closed.
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = pods.Shutdown(shutdown)
		if err := srv.Shutdown(shutdown); errors.Is(err, context.DeadlineExceeded) {
			_ = pods.Close()
			return srv.Close()
		} else if err != nil {
			return err
		}
		return nil
	}
}

// readOnly passes GET and HEAD requests to h and refuses the others (405).
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only: the node's pods pull from this address; push to the registry's loopback address", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Running returns the status of the registry serving state folder dir, and
// false when none is (no status, or its process is gone).
func Running(dir string) (Status, bool) {
	data, err := os.ReadFile(statusFile(dir))
	if err != nil {
		return Status{}, false
	}
	var st Status
	if json.Unmarshal(data, &st) != nil || !proc.Alive(st.PID) {
		return Status{}, false
	}
	return st, true
}

// Launch starts `exe dev registry --dir dir --addr addr --pod-addr
// podAddr` as a detached process, unless one already serves dir for
// podAddr (one that serves no or another pod address is restarted), and
// returns its status once it serves (up to 30 seconds).
func Launch(ctx context.Context, exe, dir, addr, podAddr string) (Status, error) {
	if st, ok := Running(dir); ok && st.PodAddr == podAddr {
		return st, nil
	} else if ok {
		if err := Stop(ctx, dir); err != nil {
			return Status{}, err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Status{}, err
	}
	_ = os.Remove(statusFile(dir))
	err := proc.StartDetached(ctx, "registry", exe, []string{"dev", "registry", "--dir", dir, "--addr", addr, "--pod-addr", podAddr}, LogFile(dir),
		func() bool { _, ok := Running(dir); return ok }, 30*time.Second)
	if err != nil {
		return Status{}, err
	}
	st, _ := Running(dir)
	return st, nil
}

// Stop stops the registry serving dir, if any (SIGTERM, then SIGKILL after
// 10 seconds).
func Stop(ctx context.Context, dir string) error {
	st, ok := Running(dir)
	if !ok {
		_ = os.Remove(statusFile(dir))
		return nil
	}
	if err := proc.StopPID(ctx, "registry", st.PID, 10*time.Second); err != nil {
		return err
	}
	_ = os.Remove(statusFile(dir))
	return nil
}
