package apps

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Where the status is kept, vCluster's names
// (pkg/controllers/deploy/deploy.go at https://github.com/loft-sh/vcluster).
const (
	// StatusConfigMap is the virtual cluster's ConfigMap (in
	// StatusNamespace) whose annotation StatusAnnotation holds the status.
	StatusConfigMap = "vcluster-deploy"
	// StatusNamespace is StatusConfigMap's namespace.
	StatusNamespace = "kube-system"
	// StatusAnnotation holds the Status as JSON.
	StatusAnnotation = "vcluster.loft.sh/status"
	// PodStatusAnnotation is the annotation of the control plane's host
	// pod that holds the Status as JSON, without the last applied
	// manifests (`clustersync virtual status` reads it).
	PodStatusAnnotation = "clustersync.io/deploy-status"
)

// The phases of a Status, its manifests and its charts (vCluster's).
const (
	PhasePending = "Pending"
	PhaseSuccess = "Success"
	PhaseFailed  = "Failed"
)

// The reasons of a failed phase (vCluster's).
const (
	ReasonChartPull = "ChartPullFailed"
	ReasonInstall   = "InstallFailed"
	ReasonUpgrade   = "UpgradeFailed"
	ReasonUninstall = "UninstallFailed"
)

// Status is the progress of experimental.deploy.vcluster, in vCluster's
// JSON shape.
type Status struct {
	// Phase is Success when the manifests and every chart are applied,
	// Failed when one failed (Reason and Message say which), else Pending.
	Phase   string `json:"phase,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`

	Charts    []ChartStatus   `json:"charts,omitempty"`
	Manifests ManifestsStatus `json:"manifests,omitempty"`
}

// ManifestsStatus is the progress of the manifests.
type ManifestsStatus struct {
	Phase   string `json:"phase,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// LastAppliedManifests are the manifests last applied, gzipped and
	// base64-encoded (what an object dropped from them is found by).
	LastAppliedManifests string `json:"lastAppliedManifests,omitempty"`
}

// ChartStatus is the progress of one release.
type ChartStatus struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Phase     string `json:"phase,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
	// LastAppliedChartConfigHash identifies the entry of
	// experimental.deploy.vcluster.helm last installed; a change upgrades
	// the release.
	LastAppliedChartConfigHash string `json:"lastAppliedChartConfigHash,omitempty"`
}

// ParseStatus reads a Status from the JSON of StatusAnnotation; "" is the
// zero Status.
func ParseStatus(s string) (Status, error) {
	var st Status
	if strings.TrimSpace(s) == "" {
		return st, nil
	}
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return Status{}, fmt.Errorf("%s: %w", StatusAnnotation, err)
	}
	return st, nil
}

// chart returns the status of release namespace/name, added when missing.
func (s *Status) chart(namespace, name string) *ChartStatus {
	for i := range s.Charts {
		if s.Charts[i].Name == name && s.Charts[i].Namespace == namespace {
			return &s.Charts[i]
		}
	}
	s.Charts = append(s.Charts, ChartStatus{Name: name, Namespace: namespace})
	return &s.Charts[len(s.Charts)-1]
}

// dropUnlisted uninstalls, in order, the releases of s.Charts that listed
// (keys "namespace/name") does not have, and forgets them; it returns
// those it uninstalled. At the first failure it stops: that release is
// marked Failed (UninstallFailed) and it and those not reached yet stay
// recorded, to be tried next time.
func (s *Status) dropUnlisted(listed map[string]bool, uninstall func(namespace, name string) error) ([]string, error) {
	var kept []ChartStatus
	var dropped []string
	for i, cs := range s.Charts {
		if listed[cs.Namespace+"/"+cs.Name] {
			kept = append(kept, cs)
			continue
		}
		if err := uninstall(cs.Namespace, cs.Name); err != nil {
			cs.Phase, cs.Reason, cs.Message = PhaseFailed, ReasonUninstall, err.Error()
			s.Charts = append(append(kept, cs), s.Charts[i+1:]...)
			return dropped, fmt.Errorf("release %s/%s, dropped from experimental.deploy.vcluster.helm: %w", cs.Namespace, cs.Name, err)
		}
		dropped = append(dropped, cs.Namespace+"/"+cs.Name)
	}
	s.Charts = kept
	return dropped, nil
}

// summarize sets s's own phase from its parts: the first failure, else
// Success when the manifests and wantCharts charts succeeded, else
// Pending.
func (s *Status) summarize(wantCharts int) {
	s.Phase, s.Reason, s.Message = PhasePending, "", ""
	if s.Manifests.Phase == PhaseFailed {
		s.Phase, s.Reason, s.Message = PhaseFailed, s.Manifests.Reason, s.Manifests.Message
		return
	}
	ok := 0
	for _, c := range s.Charts {
		switch c.Phase {
		case PhaseFailed:
			s.Phase, s.Reason, s.Message = PhaseFailed, c.Reason, c.Message
			return
		case PhaseSuccess:
			ok++
		}
	}
	if s.Manifests.Phase == PhaseSuccess && ok == wantCharts {
		s.Phase = PhaseSuccess
	}
}

// Summary is s in one line for people, e.g. "Success: manifests applied,
// 2 of 2 charts installed" or "Failed: chart default/nginx: ChartPullFailed:
// …".
func (s Status) Summary() string {
	ok := 0
	for _, c := range s.Charts {
		if c.Phase == PhaseSuccess {
			ok++
		}
	}
	parts := []string{"manifests " + strings.ToLower(orPending(s.Manifests.Phase))}
	if len(s.Charts) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d charts installed", ok, len(s.Charts)))
	}
	line := orPending(s.Phase) + ": " + strings.Join(parts, ", ")
	if s.Phase == PhaseFailed {
		what := "manifests"
		for _, c := range s.Charts {
			if c.Phase == PhaseFailed {
				what = "chart " + c.Namespace + "/" + c.Name
				break
			}
		}
		line += "; " + what + ": " + s.Reason + ": " + s.Message
	}
	return line
}

func orPending(phase string) string {
	if phase == "" {
		return PhasePending
	}
	return phase
}

// compress gzips s and encodes it in base64, as vCluster stores
// LastAppliedManifests (pkg/util/compress).
func compress(s string) (string, error) {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	if _, err := gz.Write([]byte(s)); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// uncompress reverses compress.
func uncompress(s string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", err
	}
	r, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	out, err := io.ReadAll(r)
	return string(out), err
}
