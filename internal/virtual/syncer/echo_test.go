package syncer

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func version(uid, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), ResourceVersion: rv}}
}

// A read older than the syncer's last write is behind until that write's
// event comes back (or behindFor passes, behindForOpaque for versions that
// are not integers); the echo itself is dropped, and a foreign version is
// never taken for an echo.
func TestEchoesBehind(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name   string
		writes []string // versions the syncer wrote, in order
		events []string // versions whose update events came back
		read   string   // version the cache holds
		at     time.Duration
		behind bool
	}{
		{"never written", nil, nil, "5", 0, false},
		{"write not seen yet", []string{"6"}, nil, "5", 0, true},
		{"cache holds the write", []string{"6"}, nil, "6", 0, false},
		{"echo came back", []string{"6"}, []string{"6"}, "6", 0, false},
		{"newer write pending", []string{"6", "8"}, []string{"6"}, "7", 0, true},
		{"cache holds a newer version", []string{"6"}, nil, "9", 0, false},
		{"event late", []string{"6"}, nil, "5", behindForOpaque + time.Second, true},
		{"event never came", []string{"6"}, nil, "5", behindFor + time.Second, false},
		{"versions not comparable, not seen yet", []string{"b"}, nil, "a", 0, true},
		{"versions not comparable, event never came", []string{"b"}, nil, "a", behindForOpaque + time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e echoes
			for _, rv := range tc.writes {
				e.note(version("u", rv))
			}
			for _, rv := range tc.events {
				if pass := e.notEcho().Update(event.UpdateEvent{ObjectNew: version("u", rv)}); pass {
					t.Errorf("the echo of our write %s was not dropped", rv)
				}
			}
			if got := e.behind(version("u", tc.read), now.Add(tc.at)); got != tc.behind {
				t.Errorf("behind = %v, want %v", got, tc.behind)
			}
		})
	}
	var e echoes
	e.note(version("u", "6"))
	if !e.notEcho().Update(event.UpdateEvent{ObjectNew: version("u", "7")}) {
		t.Error("a foreign version was dropped as an echo")
	}
}
