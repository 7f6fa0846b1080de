package manager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/dashboard"
	"github.com/clustersync/clustersync/internal/hosted/clouds"
)

// setupDashboard serves the web dashboard on o.DashboardAddr for as long
// as the manager runs, on every replica (it needs no leadership: every
// read and write is the signed-in user's). Sessions are kept in the
// Lease's namespace, so every replica knows every signed-in user.
func setupDashboard(mgr ctrl.Manager, o Options) error {
	tls := o.DashboardTLSCert != "" || o.DashboardTLSKey != ""
	if tls && (o.DashboardTLSCert == "" || o.DashboardTLSKey == "") {
		return errors.New("--dashboard-tls-cert and --dashboard-tls-key go together")
	}
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	d, err := dashboard.New(dashboard.Options{Config: o.Config, Secure: tls, Scheme: scheme, Clouds: clouds.All(), SessionNamespace: o.LeaderElectionNamespace})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.DashboardAddr)
	if err != nil {
		return fmt.Errorf("--dashboard-addr %s: %w", o.DashboardAddr, err)
	}
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
	return mgr.Add(anyReplica(func(ctx context.Context) error {
		if err := d.Start(ctx); err != nil {
			return err
		}
		go func() {
			<-ctx.Done()
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
		}()
		var err error
		if tls {
			err = srv.ServeTLS(ln, o.DashboardTLSCert, o.DashboardTLSKey)
		} else {
			err = srv.Serve(ln)
		}
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}))
}

// anyReplica is a function every replica runs, leader or not.
type anyReplica func(context.Context) error

func (f anyReplica) Start(ctx context.Context) error { return f(ctx) }
func (f anyReplica) NeedLeaderElection() bool        { return false }
