package ports

import "testing"

// ForTest leases n ports of the machine's registry (Default) to a
// temporary folder of tb, so they are the test's until it ends: for the
// listeners a test starts in other processes (emulators, the manager,
// kubectl port-forward) or starts, stops and starts again. A listener that
// can take port 0 and say which port it got needs none. It fails tb when
// the band has no n free ports.
func ForTest(tb testing.TB, n int) []int {
	tb.Helper()
	ps, err := Default().Reserve(tb.Context(), tb.TempDir(), n)
	if err != nil {
		tb.Fatal(err)
	}
	return ps
}
