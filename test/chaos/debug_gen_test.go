package chaos

import (
	"os"
	"strconv"
	"testing"
)

func TestDebugGen(t *testing.T) {
	seed, _ := strconv.ParseUint(os.Getenv("SEED"), 10, 64)
	n, _ := strconv.Atoi(os.Getenv("N"))
	g := newGenerator(seed, n, min(20, max(3, n/250)), []string{"chaos-a", "chaos-b", "chaos-c"})
	for g.creates < n {
		o := g.next()
		if o.key.String() == os.Getenv("KEY") {
			t.Logf("creates=%d %+v", g.creates, o)
		}
	}
}
