package runner_test

import (
	"testing"

	"github.com/clustersync/clustersync/internal/testenv"
)

// env is the host cluster, virtual control plane and syncer shared by the
// tests of this package; each test works in its own virtual namespace.
var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Name: "vc", Nodes: 2}, &env)
}
