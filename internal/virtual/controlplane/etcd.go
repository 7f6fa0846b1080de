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
	cfg, err := etcdConfig(l, clientPort, peerPort, logOutput, metrics, extra)
	if err != nil {
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

// etcdConfig is the configuration startEtcd runs etcd with: clustersync's,
// then the flags extra (CheckEtcdArgs) over it. etcd's flags are bound to
// the configuration first (embed.Config.AddFlags sets each field it binds
// to the flag's default), so that parsing extra afterwards changes only
// the fields of the flags extra gives.
func etcdConfig(l Layout, clientPort, peerPort int, logOutput string, metrics *url.URL, extra []string) (*embed.Config, error) {
	cfg := embed.NewConfig()
	fs := etcdFlags(cfg)
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
	if problems := parseEtcdArgs(fs, extra); len(problems) > 0 {
		return nil, fmt.Errorf("embedded etcd: extra flags: %s", strings.Join(problems, "; "))
	}
	return cfg, nil
}

// etcdFlags returns etcd's flag set bound to cfg's fields, which it sets to
// the flags' defaults.
func etcdFlags(cfg *embed.Config) *flag.FlagSet {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.AddFlags(fs)
	return fs
}

// CheckEtcdArgs returns one problem per argument of args, extra flags of
// the embedded etcd (controlPlane.backingStore.etcd.embedded.extraArgs,
// flags of etcd as its command line takes them,
// https://etcd.io/docs/v3.6/op-guide/configuration/), that the embedded
// etcd refuses, each starting with the argument's index, "[i]: ": one that
// is not a flag of etcd, that gives a flag clustersync sets
// (CheckExtraArgs' "etcd"), or that etcd reads only from its own command
// line rather than from its configuration (the URL lists, discovery, proxy
// and feature flags), which would be ignored.
func CheckEtcdArgs(args []string) []string {
	return parseEtcdArgs(etcdFlags(embed.NewConfig()), args)
}

// parseEtcdArgs parses args into the configuration fs is bound to, and
// returns CheckEtcdArgs' problems.
func parseEtcdArgs(fs *flag.FlagSet, args []string) []string {
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
	if err := fs.Parse(args); err != nil {
		return []string{": " + err.Error()}
	}
	var problems []string
	fs.Visit(func(f *flag.Flag) {
		// The flags AddFlags binds to the configuration's fields have the
		// flag package's own value types; etcd reads the others from the
		// flag set.
		if !strings.HasPrefix(fmt.Sprintf("%T", f.Value), "*flag.") {
			problems = append(problems, fmt.Sprintf("[%d]: --%s is read from etcd's own command line only, not by clustersync's embedded etcd", index[f.Name], f.Name))
		}
	})
	return problems
}
