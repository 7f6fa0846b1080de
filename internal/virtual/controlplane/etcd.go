package controlplane

import (
	"fmt"
	"net/url"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEmbeddedEtcd runs etcd inside this process, serving clients over TLS
// with client-certificate authentication on 127.0.0.1:clientPort, logging to
// the file l.Log("etcd").
func startEmbeddedEtcd(l Layout, clientPort, peerPort int) (*embed.Etcd, error) {
	return startEtcd(l, clientPort, peerPort, l.Log("etcd"), nil)
}

// startEtcd is startEmbeddedEtcd with the log going to logOutput (a file,
// "stderr" or "stdout") and, when metrics is set, /health and /metrics
// served over plain HTTP at that URL (for the kubelet's probes).
func startEtcd(l Layout, clientPort, peerPort int, logOutput string, metrics *url.URL) (*embed.Etcd, error) {
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
