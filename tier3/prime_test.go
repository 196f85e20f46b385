package tier3

import (
	"bytes"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/nvrtc"
)

// The helpers (the primer, the causal mask) compile with NVRTC for sm_90
// on any machine that has NVRTC.
func TestUtilKernelsCompile(t *testing.T) {
	gputest.Require(t, nvrtc.Init)
	t.Setenv(CacheEnv, "off") // compile this source, not a cached binary
	c, err := NewCompiler(9, 0)
	if err != nil {
		t.Fatalf("NVRTC loaded but not usable: %v", err)
	}
	bin, err := c.binary("util-test", Util, Util.options(c.arch))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{TouchKernel, "kr_causal_mask", "kr_approx", "kr_approx_math"} {
		if !bytes.Contains(bin, []byte(k)) {
			t.Errorf("no %s in the binary", k)
		}
	}
}
