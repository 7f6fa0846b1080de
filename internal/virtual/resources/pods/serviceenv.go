package pods

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ServiceEnv is the environment the kubelet gives a container for the
// Services of its namespace when the pod's enableServiceLinks is on (the
// default), computed from the virtual Services: the host pod runs with
// service links off (the host's Services have host names), so the syncer
// writes them into its containers. For each Service with a cluster IP
// (not headless, not ExternalName), in name order, NAME being its name in
// upper case with '-' as '_':
//
//	NAME_SERVICE_HOST=IP, NAME_SERVICE_PORT=first port,
//	NAME_SERVICE_PORT_PORTNAME=port (each named port),
//	NAME_PORT=proto://IP:first port, and for each port
//	NAME_PORT_PORT_PROTO=proto://IP:port, …_PROTO, …_PORT, …_ADDR.
//
// The rules are the kubelet's (pkg/kubelet/envvars,
// https://github.com/kubernetes/kubernetes/blob/v1.37.0/pkg/kubelet/envvars/envvars.go),
// which the conformance spec "Pods should contain environment variables for
// services" checks.
func ServiceEnv(services []corev1.Service) []corev1.EnvVar {
	services = slices.Clone(services)
	slices.SortFunc(services, func(a, b corev1.Service) int { return strings.Compare(a.Name, b.Name) })
	var out []corev1.EnvVar
	add := func(name, value string) { out = append(out, corev1.EnvVar{Name: name, Value: value}) }
	for _, svc := range services {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone || len(svc.Spec.Ports) == 0 {
			continue
		}
		prefix := envName(svc.Name)
		first := svc.Spec.Ports[0]
		add(prefix+"_SERVICE_HOST", ip)
		add(prefix+"_SERVICE_PORT", strconv.Itoa(int(first.Port)))
		for _, p := range svc.Spec.Ports {
			if p.Name != "" {
				add(prefix+"_SERVICE_PORT_"+envName(p.Name), strconv.Itoa(int(p.Port)))
			}
		}
		add(prefix+"_PORT", portURL(ip, first))
		for _, p := range svc.Spec.Ports {
			proto := string(p.Protocol)
			if proto == "" {
				proto = string(corev1.ProtocolTCP)
			}
			key := prefix + "_PORT_" + strconv.Itoa(int(p.Port)) + "_" + strings.ToUpper(proto)
			add(key, portURL(ip, p))
			add(key+"_PROTO", strings.ToLower(proto))
			add(key+"_PORT", strconv.Itoa(int(p.Port)))
			add(key+"_ADDR", ip)
		}
	}
	return out
}

// envName is a Service or port name as the kubelet writes it in a
// variable name: upper case, '-' as '_'.
func envName(name string) string { return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) }

// portURL is proto://ip:port of a Service port ("[ip]" for IPv6).
func portURL(ip string, p corev1.ServicePort) string {
	proto := strings.ToLower(string(p.Protocol))
	if proto == "" {
		proto = "tcp"
	}
	if strings.Contains(ip, ":") {
		ip = "[" + ip + "]"
	}
	return proto + "://" + ip + ":" + strconv.Itoa(int(p.Port))
}

// withServiceEnv puts the service variables svc ahead of a container's
// own (as the kubelet does: the container's variables may refer to them
// with $(NAME), and win over them), leaving out those the container sets
// itself.
func withServiceEnv(envs []corev1.EnvVar, svc []corev1.EnvVar) []corev1.EnvVar {
	if len(svc) == 0 {
		return envs
	}
	out := make([]corev1.EnvVar, 0, len(svc)+len(envs))
	for _, e := range svc {
		if !slices.ContainsFunc(envs, func(c corev1.EnvVar) bool { return c.Name == e.Name }) {
			out = append(out, e)
		}
	}
	return append(out, envs...)
}
