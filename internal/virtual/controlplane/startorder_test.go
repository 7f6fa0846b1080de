package controlplane

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestWaitFor(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failures  int           // answers before the first nil
		timeout   time.Duration // of ctx
		wantErr   string
		wantLines []string
	}{
		{name: "ready at once", timeout: time.Second, wantLines: []string{"etcd is ready after"}},
		{name: "ready after three answers", failures: 3, timeout: 5 * time.Second, wantLines: []string{"etcd is ready after"}},
		{name: "never ready", failures: 1 << 30, timeout: 500 * time.Millisecond,
			wantErr: "waiting for etcd: context deadline exceeded (last answer: connection refused)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			var calls int
			var said []string
			err := WaitFor(ctx, "etcd", func(s string) { said = append(said, s) }, func(context.Context) error {
				calls++
				if calls <= tc.failures {
					return errors.New("connection refused")
				}
				return nil
			})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if calls != tc.failures+1 {
				t.Errorf("%d checks, want %d", calls, tc.failures+1)
			}
			if len(said) != len(tc.wantLines) {
				t.Fatalf("said %q, want %d lines", said, len(tc.wantLines))
			}
			for i, w := range tc.wantLines {
				if !strings.HasPrefix(said[i], w) {
					t.Errorf("line %d %q, want it to start with %q", i, said[i], w)
				}
			}
		})
	}
}

// WaitForAPIServer asks /readyz until it answers 200.
func TestWaitForAPIServer(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if asked.Add(1) < 3 {
			http.Error(w, "[-]poststarthook/rbac/bootstrap-roles failed", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := WaitForAPIServer(ctx, &rest.Config{Host: srv.URL}, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("/readyz asked %d times, want 3", n)
	}
}
