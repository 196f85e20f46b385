package captured

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
)

// A kernel that failed on its first launch keeps the text it always had,
// and errors.As finds it, and the CUDA error, through a producer's
// wrapping, naming the kernel that failed.
func TestFirstLaunchError(t *testing.T) {
	const index = "_ZN2at6native24index_elementwise_kernelILi128ELi4EZ"
	assert := &cuda.Error{Call: "cuStreamSynchronize", Code: cuda.CodeAssert, Name: "CUDA_ERROR_ASSERT", Msg: "device-side assert triggered"}
	own := &FirstLaunchError{Kernel: index, Err: assert}
	for _, c := range []struct {
		name       string
		err        error
		wantText   string
		wantKernel string // "" when errors.As finds none
	}{
		{"own kernel", own,
			index + ": first launch: cuStreamSynchronize: CUDA_ERROR_ASSERT (device-side assert triggered)", index},
		{"producer", fmt.Errorf("its producer %s: %w", index, own),
			"its producer " + index + ": " + index + ": first launch: cuStreamSynchronize: CUDA_ERROR_ASSERT (device-side assert triggered)", index},
		{"prepare stage", fmt.Errorf("prepare: %w", fmt.Errorf("its producer %s: %w", "p", &FirstLaunchError{Kernel: "p", Err: assert})),
			"prepare: its producer p: p: first launch: cuStreamSynchronize: CUDA_ERROR_ASSERT (device-side assert triggered)", "p"},
		{"no error kept", &FirstLaunchError{Kernel: "k"}, "k: first launch failed", "k"},
		{"fault while measuring", fmt.Errorf("measure: %w", assert), "measure: cuStreamSynchronize: CUDA_ERROR_ASSERT (device-side assert triggered)", ""},
	} {
		if got := c.err.Error(); got != c.wantText {
			t.Errorf("%s: Error() = %q, want %q", c.name, got, c.wantText)
		}
		var fe *FirstLaunchError
		found := errors.As(c.err, &fe)
		if found != (c.wantKernel != "") || found && fe.Kernel != c.wantKernel {
			t.Errorf("%s: errors.As found %v (%+v), want kernel %q", c.name, found, fe, c.wantKernel)
		}
		if found && fe.Err != nil && (!cuda.IsSticky(c.err) || !errors.Is(c.err, assert)) {
			t.Errorf("%s: the CUDA error is not found through %v", c.name, c.err)
		}
	}
}
