package controlplane

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEmbeddedEtcd runs etcd inside this process, serving clients over TLS
// with client-certificate authentication on 127.0.0.1:clientPort, logging to
// the file l.Log("etcd"), with the flags extra (ApplyEtcdArgs).
func startEmbeddedEtcd(l Layout, clientPort, peerPort int, extra []string) (*embed.Etcd, error) {
	return startEtcd(l, clientPort, peerPort, l.Log("etcd"), nil, extra)
}

// startEtcd is startEmbeddedEtcd with the log going to logOutput (a file,
// "stderr" or "stdout") and, when metrics is set, /health and /metrics
// served over plain HTTP at that URL (for the kubelet's probes).
func startEtcd(l Layout, clientPort, peerPort int, logOutput string, metrics *url.URL, extra []string) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "virtual"
	cfg.Dir = l.EtcdData()
	clientURL := url.URL{Scheme: "https", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peerURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ClientTLSInfo.CertFile = l.PKI("etcd-server.crt")
	cfg.ClientTLSInfo.KeyFile = l.PKI("etcd-server.key")
	cfg.ClientTLSInfo.TrustedCAFile = l.PKI("ca.crt")
	cfg.ClientTLSInfo.ClientCertAuth = true
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{logOutput}
	if metrics != nil {
		cfg.ListenMetricsUrls = []url.URL{*metrics}
	}
	// A single-member local store: compact often, keep the database small.
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"
	cfg.QuotaBackendBytes = 2 << 30
	if err := ApplyEtcdArgs(cfg, extra); err != nil {
		return nil, err
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: %w (log: %s)", err, logOutput)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w (log: %s)", err, logOutput)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after 60s (log: %s)", logOutput)
	}
}

// CheckEtcdArgs returns one problem per argument of args, extra flags of
// the embedded etcd (controlPlane.backingStore.etcd.embedded.extraArgs),
// that ApplyEtcdArgs refuses; each starts with the argument's index,
// "[i]: ".
func CheckEtcdArgs(args []string) []string {
	return applyEtcdArgs(embed.NewConfig(), args)
}

// ApplyEtcdArgs parses args, flags of etcd as its command line takes them
// (https://etcd.io/docs/v3.6/op-guide/configuration/), into cfg, over what
// cfg holds. It returns an error listing each argument, by its index,
// that is not a flag of etcd, that gives a flag clustersync sets
// (CheckExtraArgs' "etcd"), or that etcd reads only from its own command line
// rather than from cfg (the URL lists, discovery, proxy and feature
// flags), which would be ignored.
func ApplyEtcdArgs(cfg *embed.Config, args []string) error {
	if problems := applyEtcdArgs(cfg, args); len(problems) > 0 {
		return fmt.Errorf("embedded etcd: extra flags: %s", strings.Join(problems, "; "))
	}
	return nil
}

// applyEtcdArgs is ApplyEtcdArgs, its problems one string each.
func applyEtcdArgs(cfg *embed.Config, args []string) []string {
	if len(args) == 0 {
		return nil
	}
	if problems := CheckExtraArgs("etcd", args); len(problems) > 0 {
		return problems
	}
	index := map[string]int{}
	for i, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		index[name] = i
	}
	var problems []string
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return []string{": " + err.Error()}
	}
	fs.Visit(func(f *flag.Flag) {
		// The flags AddFlags binds to cfg's fields have the flag package's
		// own value types; etcd reads the others from the flag set.
		if !strings.HasPrefix(fmt.Sprintf("%T", f.Value), "*flag.") {
			problems = append(problems, fmt.Sprintf("[%d]: --%s is read from etcd's own command line only, not by clustersync's embedded etcd", index[f.Name], f.Name))
		}
	})
	return problems
}
