package replay

import (
	"fmt"
	"strconv"

	"github.com/kreplay/kreplay/internal/buildinfo"
	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/cublaslt"
	"github.com/kreplay/kreplay/internal/cudnn"
	"github.com/kreplay/kreplay/internal/nccl"
	"github.com/kreplay/kreplay/internal/nvrtc"
)

// ConfigItem is one key and value of what a measurement ran on, as the
// configuration lines of benchmark output hold them ("gpu: NVIDIA H100
// 80GB HBM3"), so that benchstat -col gpu, -col driver or -col cublas
// compare runs across GPUs, drivers and libraries.
type ConfigItem struct {
	Key, Value string
}

// Config says what the device's measurements run on: the GPU (name, SMs,
// memory, compute capability), the NVIDIA driver and CUDA driver API
// versions, the GPU's UUID (KeyGPUUUID), the power limit, the versions
// and files of cuBLAS, cuBLASLt, NVRTC, NCCL and cuDNN as this process
// loads them (a library that does not load is left out), and kreplay's
// version. Call it outside Do.
//
// The "cudnn" line says which cuDNN the loader finds (libcudnn.so.9, or
// KREPLAY_CUDNN_LIB), which is not necessarily the one PyTorch loads from
// its wheel: the one a plain trace's cuDNN attention runs through.
func (d *Device) Config() []ConfigItem {
	c := []ConfigItem{
		{"gpu", d.Name},
		{"gpu-sms", strconv.Itoa(d.SMs)},
		{"gpu-memory", fmt.Sprintf("%.0fGiB", float64(d.MemBytes)/(1<<30))},
		{"gpu-cc", fmt.Sprintf("%d.%d", d.CC[0], d.CC[1])},
		{"cuda-driver", fmt.Sprintf("%d.%d", d.DriverVersion/1000, d.DriverVersion%1000/10)},
	}
	if m := d.Meter; m != nil {
		c = append(c, ConfigItem{"driver", m.DriverVersion()})
		if u := m.UUID(); u != "" {
			c = append(c, ConfigItem{KeyGPUUUID, u})
		}
		if w, err := m.PowerLimit(); err == nil {
			c = append(c, ConfigItem{"power-limit", fmt.Sprintf("%.0fW", w)})
		}
	}
	d.Do(func() error {
		if libs, err := d.libraries(); err == nil {
			c = append(c, ConfigItem{"cublas", libVersion(libs.BlasVersion, cublas.Path())})
		}
		return nil
	})
	if v, err := cublaslt.GetVersion(); err == nil {
		c = append(c, ConfigItem{"cublaslt", libVersion(int(v), cublaslt.Path())})
	}
	if major, minor, err := nvrtc.Version(); err == nil {
		c = append(c, ConfigItem{"nvrtc", fmt.Sprintf("%d.%d", major, minor)})
	}
	if nccl.Load() == nil {
		if v, err := nccl.Version(); err == nil {
			c = append(c, ConfigItem{"nccl", nccl.VersionString(v) + " (" + nccl.Path() + ")"})
		}
	}
	if v, err := cudnn.Version(); err == nil {
		c = append(c, ConfigItem{"cudnn", cudnn.VersionString(v) + " (" + cudnn.Path() + ")"})
	}
	return append(c, ConfigItem{"kreplay", buildinfo.Version()})
}

// libVersion writes a cuBLAS-style version code (major*10000 +
// minor*100 + patch) and the file it came from.
func libVersion(code int, path string) string {
	v := fmt.Sprintf("%d.%d.%d", code/10000, code/100%100, code%100)
	if path != "" {
		v += " (" + path + ")"
	}
	return v
}

// KeyGPUUUID is the configuration key of the GPU's UUID (NVML's): which
// chip of a model measured the results. Energies differ between chips of
// one model by a few percent, so a calibration that mixes two outputs
// checks it.
const KeyGPUUUID = "gpu-uuid"
