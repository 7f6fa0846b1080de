package pods

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParseTolerations(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		want    []corev1.Toleration
		wantErr []string // substrings of the error; nil: no error
	}{
		{
			name:    "key=value:NoSchedule is Equal",
			entries: []string{"key=value:NoSchedule"},
			want:    []corev1.Toleration{{Key: "key", Operator: corev1.TolerationOpEqual, Value: "value", Effect: corev1.TaintEffectNoSchedule}},
		},
		{
			name:    "key:NoExecute is Exists",
			entries: []string{"key:NoExecute"},
			want:    []corev1.Toleration{{Key: "key", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
		{
			// Documented: an empty key with Exists tolerates every taint of the effect.
			name:    ":NoSchedule is an empty key with Exists",
			entries: []string{":NoSchedule"},
			want:    []corev1.Toleration{{Key: "", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		},
		{
			name:    "key: has an empty effect (every effect)",
			entries: []string{"key:"},
			want:    []corev1.Toleration{{Key: "key", Operator: corev1.TolerationOpExists}},
		},
		{
			name:    "key=:PreferNoSchedule is Equal with an empty value",
			entries: []string{"key=:PreferNoSchedule"},
			want:    []corev1.Toleration{{Key: "key", Operator: corev1.TolerationOpEqual, Effect: corev1.TaintEffectPreferNoSchedule}},
		},
		{
			name:    "several entries keep their order",
			entries: []string{"example.com/a=b:PreferNoSchedule", "c:NoSchedule"},
			want: []corev1.Toleration{
				{Key: "example.com/a", Operator: corev1.TolerationOpEqual, Value: "b", Effect: corev1.TaintEffectPreferNoSchedule},
				{Key: "c", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			},
		},
		{name: "no entries", entries: nil, want: []corev1.Toleration{}},
		{name: "missing colon", entries: []string{"nocolon"}, wantErr: []string{"[0]", `"nocolon"`}},
		{name: "value without effect", entries: []string{"key=value"}, wantErr: []string{"[0]", `"key=value"`}},
		{name: "bad effect names its index", entries: []string{"ok:NoSchedule", "key:Bad"}, wantErr: []string{"[1]", `"key:Bad"`, "effect"}},
		{name: "effect is case-sensitive", entries: []string{"a:NoSchedule", "b:NoExecute", "c:noschedule"}, wantErr: []string{"[2]"}},
		{name: "extra colon", entries: []string{"key:NoSchedule:x"}, wantErr: []string{"[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTolerations(tt.entries)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("ParseTolerations(%q) = %v, want an error", tt.entries, got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if got != nil {
					t.Errorf("ParseTolerations(%q) returned %v with the error, want nil", tt.entries, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTolerations(%q): %v", tt.entries, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseTolerations(%q) = %+v\nwant %+v", tt.entries, got, tt.want)
			}
		})
	}
}

// An empty key is valid only with operator Exists (k8s.io/kubernetes
// pkg/apis/core/validation: "operator must be Exists when `key` is empty").
func TestParseTolerationsEmptyKeyWithValue(t *testing.T) {
	got, err := ParseTolerations([]string{"=value:NoSchedule"})
	if err == nil {
		t.Errorf("ParseTolerations([\"=value:NoSchedule\"]) = %+v, want an error naming [0]", got)
	} else if !strings.Contains(err.Error(), "[0]") {
		t.Errorf("error %q does not name index [0]", err)
	}
}
