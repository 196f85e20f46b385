package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/predict"
)

// noGPUError is the error of a command that found no usable GPU or
// driver (run, predict, whatif, capture): one line that says so and why,
// and exit status exitNoMeasurement (it wraps errNothingMeasured).
type noGPUError struct{ cause error }

// noGPU returns the noGPUError of cause, the error opening the GPU.
func noGPU(cause error) error { return &noGPUError{cause} }

func (e *noGPUError) Error() string {
	return "no usable GPU: " + gpuCause(e.cause) + "; " + errNothingMeasured.Error()
}

func (e *noGPUError) Unwrap() []error { return []error{errNothingMeasured, e.cause} }

// gpuCause says in one line why no GPU could be used: no driver, no
// device, or the error as it came.
func gpuCause(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	msg = strings.TrimPrefix(msg, predict.ErrNoGPU.Error()+": ")
	switch {
	case errors.Is(err, cuda.ErrNoDriver):
		return "no NVIDIA driver (" + msg + ")"
	case errors.Is(err, cuda.ErrNoDevice):
		return "no CUDA device (" + msg + ")"
	}
	return msg
}

// probeGPU checks that the CUDA driver loads and has a device, for
// capture, whose GPU work runs in the workload's own processes; tests
// that capture on a stand-in GPU replace it.
var probeGPU = cuda.HasDevice

// isNoGPU reports whether err says there is no driver or no device.
func isNoGPU(err error) bool {
	return errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice)
}

// cpuPartEnds says on w, for predict and whatif, that the command did
// its CPU part and stops there for want of a GPU (cause), and what it
// would go on to do on one (next); it returns the noGPUError.
func cpuPartEnds(w io.Writer, cause error, command, next string) error {
	fmt.Fprintf(w, "no usable GPU: %s\nThe CPU-only part ends here: on a GPU machine, %s goes on to %s.\n", gpuCause(cause), command, next)
	return noGPU(cause)
}
