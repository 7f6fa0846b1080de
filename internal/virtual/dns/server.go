package dns

import (
	"context"
	"fmt"

	"github.com/coredns/caddy"
	// The DNS server type and the plugins register themselves with caddy
	// when imported: those Corefile writes, and those a Corefile of the
	// user's (UserCorefile) most often adds, vCluster's own Corefile's
	// hosts and rewrite among them (Plugins lists them).
	_ "github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/autopath"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/rewrite"
	_ "github.com/coredns/coredns/plugin/whoami"
)

// Run serves the Corefile corefile until ctx ends, then stops the servers.
// It returns the Corefile's parse or listen error at once, and nil after a
// stop that ctx asked for. Only one Run may be active in a process (CoreDNS
// keeps its plugin and server registry per process).
func Run(ctx context.Context, corefile string) error {
	inst, err := caddy.Start(caddy.CaddyfileInput{Contents: []byte(corefile), Filepath: "Corefile", ServerTypeName: "dns"})
	if err != nil {
		return fmt.Errorf("dns: start CoreDNS: %w", err)
	}
	done := make(chan struct{})
	go func() { inst.Wait(); close(done) }()
	select {
	case <-ctx.Done():
		// Stop closes the listeners; caddy's Wait may not return after it
		// (a plugin's goroutine outlives the stop), so it is not waited for.
		if err := inst.Stop(); err != nil {
			return fmt.Errorf("dns: stop CoreDNS: %w", err)
		}
		return nil
	case <-done:
		return fmt.Errorf("dns: CoreDNS stopped")
	}
}
