// Package roofline holds replay results against the GPU's measured peaks.
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
// .bench file alone: peak-copy-gbps, peak-<dtype>-tflops and
// peaks-measured. (benchfmt keys are lower case.)
//
// roofline sits between replay and bench/predict: it imports replay, and
// bench, predict and cmd/kreplay import it.
package roofline
