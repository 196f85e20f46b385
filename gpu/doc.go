// Package gpu is the contract between the replay tiers (tier1, tier2,
// tier3, captured) and package replay: a tier turns a signature into a
// Kernel, replay times it. It names the device handles that contract
// passes (Stream, DevicePtr, Function, Comm), so that another module can
// call the tiers' and replay's exported functions with the values
// replay.Device gives it.
//
// All methods of a Kernel that touch the GPU must run on the goroutine
// that holds the device's CUDA context (replay.Device.Do).
package gpu
