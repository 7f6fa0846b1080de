package deploy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

// ContextName is the kube context `virtual connect` writes for virtual
// cluster name of host namespace on host context hostContext, spelled as
// vCluster spells it: vcluster_NAME_NAMESPACE_HOSTCONTEXT.
func ContextName(name, namespace, hostContext string) string {
	return "vcluster_" + name + "_" + namespace + "_" + hostContext
}

// Forward opens a port-forward (client-go's portforward over SPDY, as
// `kubectl port-forward` does) from 127.0.0.1:localPort (0 picks a free
// port) to port 8443 of the control plane pod of virtual cluster name, and
// returns the local port. The forward ends when ctx ends or when stop is
// called; errors of the forward itself go to errOut.
func Forward(ctx context.Context, host *rest.Config, name, namespace string, localPort int, errOut io.Writer) (port int, stop func(), err error) {
	transport, upgrader, err := spdy.RoundTripperFor(host)
	if err != nil {
		return 0, nil, err
	}
	u, err := url.Parse(host.Host)
	if err != nil {
		return 0, nil, err
	}
	u.Path = fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s/portforward", u.Path, namespace, PodName(name))
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stopCh, ready := make(chan struct{}), make(chan struct{})
	ports := []string{fmt.Sprintf("%d:%d", localPort, controlplane.PodPorts.APIServer)}
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, ports, stopCh, ready, io.Discard, errOut)
	if err != nil {
		return 0, nil, err
	}
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	stop = sync.OnceFunc(func() { close(stopCh) })
	go func() {
		<-ctx.Done()
		stop()
	}()
	select {
	case <-ready:
	case err := <-failed:
		stop()
		return 0, nil, fmt.Errorf("port-forward to %s/%s: %w", namespace, PodName(name), err)
	case <-ctx.Done():
		stop()
		return 0, nil, ctx.Err()
	}
	got, err := fw.GetPorts()
	if err != nil || len(got) == 0 {
		stop()
		return 0, nil, fmt.Errorf("port-forward to %s/%s: no local port (%v)", namespace, PodName(name), err)
	}
	return int(got[0].Local), stop, nil
}

// LocalServer is the API server URL of a forward on port.
func LocalServer(port int) string { return "https://127.0.0.1:" + strconv.Itoa(port) }

// Reachable tells whether a TLS server answers at server (an https URL)
// within timeout. It checks reachability only (no certificate check): the
// kubeconfig's CA verifies the server when it is used.
func Reachable(ctx context.Context, server string, timeout time.Duration) bool {
	u, err := url.Parse(server)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // reachability probe only
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// ReachableWithin polls Reachable (2 s per try, every 500 ms) until server
// answers or timeout passes.
func ReachableWithin(ctx context.Context, server string, timeout time.Duration) bool {
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		return Reachable(ctx, server, 2*time.Second), nil
	})
	return err == nil
}

// MergeKubeconfig adds the cluster, user and context of the one-context
// kubeconfig vc to the kubeconfig file path (created when missing), all
// named contextName (replacing entries of that name), and makes that
// context current. Other entries are kept as they are.
func MergeKubeconfig(path string, vc []byte, contextName string) error {
	src, err := clientcmd.Load(vc)
	if err != nil {
		return err
	}
	cur, ok := src.Contexts[src.CurrentContext]
	if !ok {
		return errors.New("virtual cluster kubeconfig has no current context")
	}
	dst := clientcmdapi.NewConfig()
	if data, err := os.ReadFile(path); err == nil {
		if dst, err = clientcmd.Load(data); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	dst.Clusters[contextName] = src.Clusters[cur.Cluster]
	dst.AuthInfos[contextName] = src.AuthInfos[cur.AuthInfo]
	dst.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	dst.CurrentContext = contextName
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*dst, path)
}

// CurrentContext is the current context of the kubeconfig file path, or ""
// when it cannot be read.
func CurrentContext(path string) string {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return ""
	}
	return cfg.CurrentContext
}
