// Package energy measures GPU energy, power, clocks and throttling through
// NVML, for kreplay's time-and-energy predictions.
//
// NVML is loaded at run time (libnvidia-ml.so.1). On a machine without it,
// [Open] and [OpenDevice] return an error for which errors.Is(err, ErrNoNVML)
// holds; callers are expected to carry on timing without energy. Nothing in
// this package panics for want of a GPU.
//
// The pieces are:
//
//   - [Open] / [Close]: process-wide, reference-counted NVML initialisation.
//   - [Device] (from [OpenDevice] by NVML's index, or [OpenDeviceByPCIBusID]
//     for a CUDA device: NVML numbers every GPU of the machine, whatever
//     CUDA_VISIBLE_DEVICES hides or reorders): one GPU, with its name, UUID,
//     driver version, power limit, raw energy counter, fixed [Hardware]
//     figures (maximum clocks, memory bus width) and a [State] snapshot
//     (clocks, temperature, power and decoded [ClockReasons]).
//   - [Device.Measure] and [Device.IdlePower]: energy over a window that is
//     aligned to changes of NVML's total-energy counter, which advances only
//     about every 100 ms, so a naive pair of reads would be off by up to one
//     tick. See [MeasureOptions] for window sizing and [Reading] for the
//     result and its error bounds. [MeasureDevices] measures several GPUs
//     at once while one piece of work (a collective across them) runs,
//     each over a window aligned to its own counter.
//   - [Sampler]: a background goroutine per device sampling [State] at a fixed
//     interval; [Summarize] and [IntegratePower] reduce the samples.
//
// The tick and window arithmetic is kept in pure functions over recorded
// sequences so that it is tested on recorded data without a GPU.
package energy
