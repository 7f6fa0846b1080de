package pods

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ParseTolerations reads vCluster's enforceTolerations entries, each
// "key[=value]:Effect" (operator Equal with a value, Exists without) or
// "key:Effect"; an empty key with Exists, ":Effect", tolerates every taint of
// that effect. The error names the entry's index.
func ParseTolerations(entries []string) ([]corev1.Toleration, error) {
	out := make([]corev1.Toleration, 0, len(entries))
	for i, e := range entries {
		keyValue, effect, ok := strings.Cut(e, ":")
		if !ok {
			return nil, fmt.Errorf("[%d] %q: want key[=value]:Effect", i, e)
		}
		t := corev1.Toleration{Effect: corev1.TaintEffect(effect)}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute, "":
		default:
			return nil, fmt.Errorf("[%d] %q: effect must be NoSchedule, PreferNoSchedule or NoExecute", i, e)
		}
		if key, value, hasValue := strings.Cut(keyValue, "="); hasValue {
			if key == "" {
				return nil, fmt.Errorf("[%d] %q: a value needs a key", i, e)
			}
			t.Key, t.Operator, t.Value = key, corev1.TolerationOpEqual, value
		} else {
			t.Key, t.Operator = keyValue, corev1.TolerationOpExists
		}
		out = append(out, t)
	}
	return out, nil
}
