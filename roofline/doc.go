// Package roofline holds replay results against the GPU's measured peaks,
// and against its hardware peaks.
//
// Peaks are measured once per device (Measure, ForDevice) and cached as
// JSON under the user cache directory, keyed by the device's identity:
// GPU name and UUID, NVIDIA driver, CUDA driver API, cuBLAS and cuBLASLt
// versions, and the measuring method's version. Two kinds of peak:
//
//   - the copy bandwidth: a cuMemcpyDtoDAsync of a large buffer (1 GiB by
//     default) on the device's stream, timed with CUDA events, best of
//     several repeats, counted as bytes read plus written: 2 x size /
//     time. This is the convention of replay's Work.Bytes (a device copy
//     of n bytes is 2n bytes of work), so a signature's GB/s and the copy
//     roof are in the same units. It is what a copy engine reaches, not
//     the data sheet's bandwidth;
//   - dense GEMM FLOP/s per dtype: a square GEMM (8192 on each side by
//     default), best of several repeats, 2·m·n·k / time: f16, bf16 and f32
//     through cublasGemmEx with compute type 32F and CUBLAS_DEFAULT_MATH,
//     as PyTorch calls it (f32 with CUBLAS_GEMM_DEFAULT: plain FP32, TF32
//     off), and f8e4m3
//     through cublasLtMatmul (e4m3 inputs, bf16 output) where the GPU has
//     FP8 tensor cores (compute capability 8.9 and later) and cuBLASLt
//     finds an algorithm.
//
// A signature's roof is min(peak FLOP/s, AI x copy bandwidth), AI =
// FLOPs / bytes (Place). Its share of the roof is the time the roofs allow,
// max(bytes / bandwidth, FLOPs / peak), over its replay time: the larger of
// its memory share (achieved bytes/s over the copy bandwidth) and its
// compute share (achieved FLOP/s over the peak). A share above 1 means the
// replay beat a roof, as one whose operands stay in the L2 (a warm replay)
// can beat the device-memory copy.
//
// Which peak holds a signature's FLOPs (PeakDType): GEMMs and attention
// use their input dtype's tensor peak (f8e5m2 uses f8e4m3's: the same
// tensor-core rate); every other kernel uses the f32 peak, because
// PyTorch's elementwise, reduction, norm and softmax kernels compute in
// f32 on the CUDA cores whatever the tensors' dtype. Collectives and
// copies to or from the host are not placed: their roof is a link, not
// the device.
//
// The hardware roof (Hardware, the HW fields of Point) holds the same work
// against the hardware's own peaks, the ones Nsight Compute's throughput
// percentages (dram__throughput, sm__throughput ...pct_of_peak_sustained)
// hold it against: compare those with the hardware share, not the
// measured one.
//
//   - memory: the DRAM bandwidth from NVML, maximum memory clock x bus
//     width x 2 (double data rate) / 8 (3352.3 GB/s on an H100 SXM: 2619
//     MHz x 5120 bits), counted as Work.Bytes are, read plus written;
//   - compute: SMs x FLOPs per SM per clock of the dtype (FLOPsPerClock)
//     x the SM clock the replay ran at. The per-clock rates are data-sheet
//     constants (NVIDIA's published peaks over SMs x boost clock), kept
//     only for compute capability 9.0 (H100, H200) and 8.0 (A100); any
//     other architecture or dtype gets no hardware compute share, and the
//     point says why rather than guessing. The clock (PickClock, named in
//     Point.ClockSource and the table's clock column) is, by preference:
//     the one kreplay's clock probe measured on the GPU during the replay
//     ("probe": SM cycles, clock64, over %globaltimer's nanoseconds, while
//     the replay's launches run once more after the timed samples;
//     replay.Options.ClockProbe, on with `kreplay run -roofline`;
//     Work.ProbeClockMHz from replay.Result.SMClockMHz); else the mean SM
//     clock NVML sampled during the replay ("nvml": Work.SMClockMHz, from
//     replay.Result.GPU, or sm-MHz in benchmark output); else the device's
//     maximum SM clock, assumed ("max", ClockAssumed). NVML's readings can
//     stand far above the clock the work ran at (heavy GEMMs under the
//     power cap), enough to move the hardware compute share well off
//     Nsight Compute's; at the work's own clock the two agree (see
//     results/h100/roofline-whatif/README.md). Taken at the kernel's own
//     clock the share is per clock cycle, as ncu's sm__throughput is,
//     whatever the clock.
//
// The hardware figures are read when the peaks are measured (HardwareOf:
// SMs and compute capability from CUDA, the rest from NVML) and cached
// with them. The bound stays the measured roof's.
//
// What bounds a signature (Classify) is a rule of kreplay's, not a
// measurement:
//
//   - latency: its share of the roof is under LatencyShare (10%), or its
//     replay takes under ShortNS (5 µs) and its share is under ShortShare
//     (50%): it reaches neither roof by a large margin, so launch and
//     ramp-up, too little parallelism or dependent memory latency set its
//     time;
//   - otherwise compute when its compute share is at least its memory
//     share (its AI is at or above the ridge point, peak / bandwidth), and
//     memory when not.
//
// Peaks travel with benchmark output as configuration lines (Config,
// FromConfig), so that `kreplay report` places each signature from a
// .bench file alone: peak-copy-gbps, peak-<dtype>-tflops, peak-dram-gbps,
// peak-sm-clock-mhz and peaks-measured; the hardware roof's SM count and
// compute capability are read from the device's own gpu-sms and gpu-cc
// lines. Output written before the hardware roof reads as before, without
// a hardware share (Hardware.Missing names the lines it lacks). (benchfmt
// keys are lower case.)
//
// roofline sits between replay and bench/predict: it imports replay, and
// bench, predict and cmd/kreplay import it.
package roofline
