package eks

import (
	"fmt"
	"strconv"
	"strings"
)

// minorVersion parses "1.31" (or "1.31.2", "v1.31") into major and minor.
func minorVersion(v string) (major, minor int, err error) {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) < 2 {
		return 0, 0, fmt.Errorf("kubernetes version %q: want MAJOR.MINOR", v)
	}
	if major, err = strconv.Atoi(parts[0]); err != nil {
		return 0, 0, fmt.Errorf("kubernetes version %q: %w", v, err)
	}
	if minor, err = strconv.Atoi(parts[1]); err != nil {
		return 0, 0, fmt.Errorf("kubernetes version %q: %w", v, err)
	}
	return major, minor, nil
}

// NextVersion is the version to upgrade a cluster at current to on the way
// to desired: EKS upgrades one minor version at a time and never
// downgrades, so the result is current's next minor (or desired when that
// is the next one), "" when current is already desired, and an error that
// names both versions for a downgrade or a major-version change.
func NextVersion(current, desired string) (string, error) {
	cmaj, cmin, err := minorVersion(current)
	if err != nil {
		return "", err
	}
	dmaj, dmin, err := minorVersion(desired)
	if err != nil {
		return "", err
	}
	switch {
	case cmaj != dmaj:
		return "", fmt.Errorf("kubernetes version %s → %s: major version changes are not supported", current, desired)
	case dmin < cmin:
		return "", fmt.Errorf("kubernetes version %s → %s: EKS cannot downgrade a cluster; set kubernetesVersion to %s or later", current, desired, current)
	case dmin == cmin:
		return "", nil
	}
	return fmt.Sprintf("%d.%d", cmaj, cmin+1), nil
}
