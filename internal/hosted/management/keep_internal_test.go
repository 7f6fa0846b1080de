package management

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
)

// The event that reports a keep answer removed once no recorded conflict
// matches it.
func TestKeepGone(t *testing.T) {
	k := engine.Keep{Config: []byte(`1`), Upstream: []byte(`4`)}
	const path = "nodeGroups[workers].desiredSize"
	carried := engine.Keeps{path: k}
	for _, tt := range []struct {
		name      string
		carried   engine.Keeps
		conflicts []hostedv1.FieldConflict
		now       string
		typ, why  string
		note      string
	}{
		{"kept", carried, nil, `1`, corev1.EventTypeNormal, "ConflictAnswered", "kept your value 1 over EKS's 4"},
		{"edited since", carried, nil, `3`, corev1.EventTypeNormal, "ConflictAnswered", "spec.eksConfig." + path + " was edited to 3"},
		{"the cloud moved again", carried, []hostedv1.FieldConflict{{Path: path, Config: `1`, Upstream: `5`, Applied: `4`}}, `1`,
			corev1.EventTypeWarning, "KeepIgnored", "EKS moved again (config 1, upstream 5 now) before your value 1 was pushed over 4"},
		{"never matched", nil, nil, `1`, corev1.EventTypeWarning, "KeepIgnored", "no conflict with those values is recorded"},
		{"never matched, another conflict of the path", nil, []hostedv1.FieldConflict{{Path: path, Config: `1`, Upstream: `5`}}, `1`,
			corev1.EventTypeWarning, "KeepIgnored", "no conflict with those values is recorded"},
		{"a path of no field", carried, nil, ``, corev1.EventTypeNormal, "ConflictAnswered", "the conflict ended otherwise"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var now []byte
			if tt.now != "" {
				now = []byte(tt.now)
			}
			typ, why, note := keepGone(path, k, tt.carried, tt.conflicts, now, "EKS", "eksConfig")
			if typ != tt.typ || why != tt.why || !strings.Contains(note, tt.note) || !strings.HasPrefix(note, path+": ") {
				t.Errorf("keepGone = %s %s %q; want %s %s containing %q", typ, why, note, tt.typ, tt.why, tt.note)
			}
		})
	}
}
