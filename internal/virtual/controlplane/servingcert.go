package controlplane

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"

	"github.com/clustersync/clustersync/internal/pki"
	"github.com/clustersync/clustersync/internal/virtual/config"
)

// ServingSANs are the names and addresses the API server's certificate
// covers in a pod control plane whose host Service is svc: PodSANs (the
// Service's cluster IP and names, the pod IP, controlPlane.proxy.extraSANs),
// the Ingress host o.IngressHost, every address the Service publishes (its
// externalIPs, its requested loadBalancerIP, its load balancer's IPs and
// host names from its status) and, when it has node ports (NodePort or
// LoadBalancer), the InternalIP and ExternalIP of each of nodes, where
// clients outside the host reach it. Duplicates are dropped.
func ServingSANs(o PodOptions, svc *corev1.Service, nodes []corev1.Node) SANs {
	extra := append([]string{o.IngressHost}, o.ExtraSANs...)
	extra = append(extra, svc.Spec.ExternalIPs...)
	extra = append(extra, svc.Spec.LoadBalancerIP)
	for _, in := range svc.Status.LoadBalancer.Ingress {
		extra = append(extra, in.IP, in.Hostname)
	}
	if config.HasNodePorts(svc.Spec.Type) {
		for _, n := range nodes {
			for _, a := range n.Status.Addresses {
				if a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP {
					extra = append(extra, a.Address)
				}
			}
		}
	}
	return PodSANs(o.Name, o.Namespace, svc.Spec.ClusterIP, o.PodIP, extra)
}

// ExposedService reads the host Service name of namespace and, when it has
// node ports, the host's nodes: what ServingSANs and the addresses clients
// use (deploy.ServerURLs) are made of. Errors name the object.
func ExposedService(ctx context.Context, host kubernetes.Interface, name, namespace string) (*corev1.Service, []corev1.Node, error) {
	svc, err := host.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("host service %s/%s: %w", namespace, name, err)
	}
	if !config.HasNodePorts(svc.Spec.Type) {
		return svc, nil, nil
	}
	list, err := host.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("host nodes (the addresses of the node ports): %w", err)
	}
	return svc, list.Items, nil
}

// servingSANs reads the host Service o.Name and, when it has node ports,
// the host's nodes, and returns ServingSANs of them.
func servingSANs(ctx context.Context, host kubernetes.Interface, o PodOptions) (SANs, error) {
	svc, nodes, err := ExposedService(ctx, host, o.Name, o.Namespace)
	if err != nil {
		return SANs{}, err
	}
	return ServingSANs(o, svc, nodes), nil
}

// ensureServingCert reissues the API server's certificate in o.Dir's pki
// folder when it lacks a SAN of sans, with the CA kept there: it writes
// the new certificate and key (each file replaced at once; kube-apiserver
// reloads its serving certificate from them without a restart) and
// updates the host Secret CertsSecretName, so the next start keeps it. It
// reports whether it reissued; errors name the file or the object.
func ensureServingCert(ctx context.Context, host kubernetes.Interface, o PodOptions, sans SANs) (bool, error) {
	l := Layout{Dir: o.Dir}
	current, err := os.ReadFile(l.PKI("apiserver.crt"))
	if err != nil {
		return false, err
	}
	if coversSANs(current, o.Name, sans) {
		return false, nil
	}
	caCert, err := os.ReadFile(l.PKI("ca.crt"))
	if err != nil {
		return false, err
	}
	caKey, err := os.ReadFile(l.PKI("ca.key"))
	if err != nil {
		return false, err
	}
	ca, err := pki.ParseCA(caCert, caKey)
	if err != nil {
		return false, fmt.Errorf("%s: %w", l.PKI("ca.crt"), err)
	}
	crt, key, err := ca.Issue(apiServerRequest(o.Name, sans))
	if err != nil {
		return false, err
	}
	secrets := host.CoreV1().Secrets(o.Namespace)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := secrets.Get(ctx, CertsSecretName(o.Name), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data["apiserver.crt"], s.Data["apiserver.key"] = crt, key
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("update host secret %s/%s with the reissued API server certificate: %w", o.Namespace, CertsSecretName(o.Name), err)
	}
	// The key first: until the certificate follows, the API server keeps
	// serving the old pair (it loads a pair only when both match).
	if err := pki.WriteFiles(map[string][]byte{l.PKI("apiserver.key"): key}); err != nil {
		return false, err
	}
	return true, pki.WriteFiles(map[string][]byte{l.PKI("apiserver.crt"): crt})
}

// KeepServingCert runs ensureServingCert with ServingSANs whenever the
// host Service o.Name or, when the Service has node ports, a host node
// changes (a load balancer's address arrives, a node joins), until ctx
// ends; both are read from informers' caches, not asked of the host at
// each change. A failure is logged and tried again with a growing delay
// (client-go's work queue, 5 ms to 1000 s). It is what covers the
// addresses a Service gets after the pod started, which the init
// container could not know.
func KeepServingCert(ctx context.Context, host kubernetes.Interface, o PodOptions, log logr.Logger) error {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	enqueue := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { queue.Add("cert") },
		UpdateFunc: func(any, any) { queue.Add("cert") },
		DeleteFunc: func(any) { queue.Add("cert") },
	}
	services := informers.NewSharedInformerFactoryWithOptions(host, 10*time.Minute, informers.WithNamespace(o.Namespace),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.Name).String()
		}))
	svcInformer := services.Core().V1().Services()
	if _, err := svcInformer.Informer().AddEventHandler(enqueue); err != nil {
		return err
	}
	services.Start(ctx.Done())
	defer services.Shutdown()
	services.WaitForCacheSync(ctx.Done())
	// The nodes matter only to a Service with node ports, whose type is
	// set at install (a change of it restarts the pod, and this with it):
	// a ClusterIP Service's syncer keeps no copy of every host node.
	var nodeLister corelisters.NodeLister
	if svc, err := svcInformer.Lister().Services(o.Namespace).Get(o.Name); err == nil && config.HasNodePorts(svc.Spec.Type) {
		nodes := informers.NewSharedInformerFactory(host, 10*time.Minute)
		nodeInformer := nodes.Core().V1().Nodes()
		if _, err := nodeInformer.Informer().AddEventHandler(enqueue); err != nil {
			return err
		}
		nodeLister = nodeInformer.Lister()
		nodes.Start(ctx.Done())
		defer nodes.Shutdown()
		nodes.WaitForCacheSync(ctx.Done())
	}
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for {
		key, shutdown := queue.Get()
		if shutdown {
			return nil
		}
		reissued, err := false, error(nil)
		if svc, getErr := svcInformer.Lister().Services(o.Namespace).Get(o.Name); getErr == nil {
			var nodes []corev1.Node
			if nodeLister != nil {
				list, _ := nodeLister.List(labels.Everything()) // a cache's list does not fail
				for _, n := range list {
					nodes = append(nodes, *n)
				}
			}
			reissued, err = ensureServingCert(ctx, host, o, ServingSANs(o, svc, nodes))
		} // else the Service is gone: nothing to cover until it is back
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error(err, "keeping the API server's certificate")
			queue.AddRateLimited(key)
		case reissued:
			log.Info("reissued the API server's certificate for the Service's addresses")
			queue.Forget(key)
		default:
			queue.Forget(key)
		}
		queue.Done(key)
	}
}
