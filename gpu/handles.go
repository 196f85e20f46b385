package gpu

import (
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/nccl"
)

// The device handles are kreplay's internal CUDA and NCCL bindings'
// types under public names: a value comes from package replay (a
// Device's Stream, a Group's communicators) or from a tier, and goes back
// to them; its exported methods are the bindings'.
type (
	// Stream is a CUDA stream (replay.Device.Stream).
	Stream = cuda.Stream
	// DevicePtr is an address in device memory.
	DevicePtr = cuda.DevicePtr
	// Function is a compiled kernel loaded in a CUDA context
	// (tier3.Compiler.Function).
	Function = cuda.Function
	// Comm is one rank's NCCL communicator (replay.Group.Comms).
	Comm = nccl.Comm
)
