package pods

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func svc(name, ip string, ports ...corev1.ServicePort) corev1.Service {
	return corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}, Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func TestServiceEnv(t *testing.T) {
	env := func(kv ...string) []corev1.EnvVar {
		var out []corev1.EnvVar
		for i := 0; i < len(kv); i += 2 {
			out = append(out, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tt := range []struct {
		name     string
		services []corev1.Service
		want     []corev1.EnvVar
	}{
		{"one unnamed TCP port (the conformance spec's fooservice)", []corev1.Service{svc("fooservice", "10.96.0.7", corev1.ServicePort{Port: 8765, Protocol: corev1.ProtocolTCP})}, env(
			"FOOSERVICE_SERVICE_HOST", "10.96.0.7", "FOOSERVICE_SERVICE_PORT", "8765", "FOOSERVICE_PORT", "tcp://10.96.0.7:8765",
			"FOOSERVICE_PORT_8765_TCP", "tcp://10.96.0.7:8765", "FOOSERVICE_PORT_8765_TCP_PROTO", "tcp", "FOOSERVICE_PORT_8765_TCP_PORT", "8765",
			"FOOSERVICE_PORT_8765_TCP_ADDR", "10.96.0.7")},
		{"named ports, two protocols, a dashed name, order by name", []corev1.Service{
			svc("web-api", "10.96.0.9", corev1.ServicePort{Name: "http-alt", Port: 80, Protocol: corev1.ProtocolTCP}, corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}),
			svc("a", "10.96.0.8", corev1.ServicePort{Port: 1}),
		}, env(
			"A_SERVICE_HOST", "10.96.0.8", "A_SERVICE_PORT", "1", "A_PORT", "tcp://10.96.0.8:1",
			"A_PORT_1_TCP", "tcp://10.96.0.8:1", "A_PORT_1_TCP_PROTO", "tcp", "A_PORT_1_TCP_PORT", "1", "A_PORT_1_TCP_ADDR", "10.96.0.8",
			"WEB_API_SERVICE_HOST", "10.96.0.9", "WEB_API_SERVICE_PORT", "80", "WEB_API_SERVICE_PORT_HTTP_ALT", "80", "WEB_API_SERVICE_PORT_DNS", "53",
			"WEB_API_PORT", "tcp://10.96.0.9:80",
			"WEB_API_PORT_80_TCP", "tcp://10.96.0.9:80", "WEB_API_PORT_80_TCP_PROTO", "tcp", "WEB_API_PORT_80_TCP_PORT", "80", "WEB_API_PORT_80_TCP_ADDR", "10.96.0.9",
			"WEB_API_PORT_53_UDP", "udp://10.96.0.9:53", "WEB_API_PORT_53_UDP_PROTO", "udp", "WEB_API_PORT_53_UDP_PORT", "53", "WEB_API_PORT_53_UDP_ADDR", "10.96.0.9")},
		{"headless, ExternalName and portless Services give nothing", []corev1.Service{
			svc("headless", corev1.ClusterIPNone, corev1.ServicePort{Port: 80}), svc("external", ""), svc("noports", "10.96.0.10"),
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ServiceEnv(tt.services); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// The host pod's containers get the service variables ahead of their own,
// which win; enableServiceLinks false leaves them out.
func TestHostSpecServiceEnv(t *testing.T) {
	services := func(ns string) []corev1.Service {
		if ns != "team" {
			t.Errorf("services of namespace %s asked for", ns)
		}
		return []corev1.Service{svc("db", "10.96.0.5", corev1.ServicePort{Port: 5432})}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "main", Env: []corev1.EnvVar{{Name: "DB_SERVICE_PORT", Value: "mine"}, {Name: "URL", Value: "$(DB_PORT)"}}}}}}
	spec := HostSpec(pod, Environment{Translator: testTr, Services: services}, nil)
	names := map[string]int{}
	for i, e := range spec.Containers[0].Env {
		names[e.Name+"="+e.Value] = i
	}
	dbPort, ok1 := names["DB_PORT=tcp://10.96.0.5:5432"]
	url, ok2 := names["URL=$(DB_PORT)"]
	if _, mine := names["DB_SERVICE_PORT=mine"]; !ok1 || !ok2 || !mine || dbPort > url {
		t.Errorf("env %v", spec.Containers[0].Env)
	}
	if _, theirs := names["DB_SERVICE_PORT=5432"]; theirs {
		t.Errorf("the container's own DB_SERVICE_PORT was overridden: %v", spec.Containers[0].Env)
	}
	pod.Spec.EnableServiceLinks = ptr.To(false)
	for _, e := range HostSpec(pod, Environment{Translator: testTr, Services: services}, nil).Containers[0].Env {
		if e.Name == "DB_PORT" {
			t.Errorf("enableServiceLinks false, yet %s", e.Name)
		}
	}
}
