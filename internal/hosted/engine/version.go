package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// version is a parsed Kubernetes version: "1.31", "1.31.2" or "v1.31.2";
// patch is -1 when absent.
type version struct{ major, minor, patch int }

func parseVersion(v string) (version, error) {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return version{}, fmt.Errorf("kubernetes version %q: want MAJOR.MINOR or MAJOR.MINOR.PATCH", v)
	}
	out := version{patch: -1}
	for i, to := range []*int{&out.major, &out.minor, &out.patch}[:len(parts)] {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return version{}, fmt.Errorf("kubernetes version %q: %w", v, err)
		}
		*to = n
	}
	return out, nil
}

// NextVersion is the version to upgrade a cluster at current to on the way
// to desired, for cloud (named in errors): managed Kubernetes services
// upgrade one minor version at a time and never downgrade
// (https://learn.microsoft.com/azure/aks/upgrade-cluster,
// https://docs.aws.amazon.com/eks/latest/userguide/update-cluster.html).
// It returns desired when desired is within the next minor version (a
// patch of the current minor, or the next minor), else current's next
// minor as "MAJOR.MINOR"; "" when current already is desired (a desired
// version without a patch matches every patch of its minor). Errors name
// both versions: a downgrade, a major-version change, a version that does
// not parse.
func NextVersion(cloud, current, desired string) (string, error) {
	c, err := parseVersion(current)
	if err != nil {
		return "", err
	}
	d, err := parseVersion(desired)
	if err != nil {
		return "", err
	}
	downgrade := fmt.Errorf("kubernetes version %s → %s: %s cannot downgrade a cluster; set kubernetesVersion to %s or later", current, desired, cloud, current)
	switch {
	case c.major != d.major:
		return "", fmt.Errorf("kubernetes version %s → %s: major version changes are not supported", current, desired)
	case d.minor < c.minor:
		return "", downgrade
	case d.minor == c.minor && (d.patch < 0 || d.patch == c.patch):
		return "", nil
	case d.minor == c.minor && c.patch >= 0 && d.patch < c.patch:
		return "", downgrade
	case d.minor <= c.minor+1:
		return desired, nil
	}
	return fmt.Sprintf("%d.%d", c.major, c.minor+1), nil
}
