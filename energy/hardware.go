package energy

import "errors"

// Hardware is what NVML reports of a GPU's fixed figures: its maximum
// clocks and its memory bus width. A figure NVML does not give is 0.
type Hardware struct {
	// MaxSMClockMHz and MaxMemClockMHz are nvmlDeviceGetMaxClockInfo of
	// NVML_CLOCK_SM and NVML_CLOCK_MEM (1980 and 2619 on an H100 SXM).
	MaxSMClockMHz  uint32
	MaxMemClockMHz uint32
	// MemoryBusWidthBits is nvmlDeviceGetMemoryBusWidth (5120 on an
	// H100 SXM).
	MemoryBusWidthBits uint32
}

// DRAMBytesPerSecond is the device memory's peak bandwidth from the data
// sheet's figures: maximum memory clock x bus width x 2 (double data
// rate) / 8, in bytes per second; 3352.3e9 for an H100 SXM (2619 MHz,
// 5120 bits). It counts bytes read and written together. 0 when either
// figure is missing.
func (h Hardware) DRAMBytesPerSecond() float64 {
	return float64(h.MaxMemClockMHz) * 1e6 * float64(h.MemoryBusWidthBits) * 2 / 8
}

// Hardware reads the GPU's maximum SM and memory clocks and its memory
// bus width. The figures that NVML gives are set even when others fail;
// the error then joins the failures.
func (d *Device) Hardware() (Hardware, error) {
	var h Hardware
	err := d.do(func() error {
		var errs []error
		for _, q := range []struct {
			dst *uint32
			get func() (uint32, error)
		}{
			{&h.MaxSMClockMHz, d.h.maxSMClockMHz},
			{&h.MaxMemClockMHz, d.h.maxMemClockMHz},
			{&h.MemoryBusWidthBits, d.h.memoryBusWidth},
		} {
			v, err := q.get()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			*q.dst = v
		}
		return errors.Join(errs...)
	})
	return h, err
}
