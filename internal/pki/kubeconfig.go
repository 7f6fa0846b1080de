package pki

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig builds a kubeconfig with one cluster, user and context, all
// named name, that authenticates with a client certificate.
func Kubeconfig(name, server string, caPEM, certPEM, keyPEM []byte) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return cfg
}

// WriteKubeconfig writes cfg to path with mode 0600.
func WriteKubeconfig(cfg *clientcmdapi.Config, path string) error {
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return WriteFiles(map[string][]byte{path: data})
}
