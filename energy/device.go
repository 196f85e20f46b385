package energy

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Device is one GPU opened through NVML. Several Devices (different or even
// the same index) may be open at once; each holds one NVML reference until
// [Device.Close]. All methods are safe for concurrent use; after Close they
// return [ErrClosed].
type Device struct {
	index  int
	h      handle
	name   string
	uuid   string
	driver string

	// mu guards closed. NVML calls run under the read lock so that Close
	// (write lock) cannot shut NVML down underneath them.
	mu     sync.RWMutex
	closed bool

	// instant records whether FI_DEV_POWER_INSTANT answers:
	// 0 not yet known, 1 yes, 2 no.
	instant atomic.Int32
}

// OpenDevice opens the GPU with the given NVML index (0-based), initialising
// NVML if needed (see [Open]). Without NVML the error satisfies
// errors.Is(err, ErrNoNVML).
func OpenDevice(index int) (*Device, error) {
	return openWith(fmt.Sprintf("GPU %d", index), func() (*Device, error) { return openDevice(index) })
}

// OpenDeviceByPCIBusID opens the GPU at the PCI address busID
// ("domain:bus:device.function"), as [OpenDevice] does. NVML numbers GPUs
// in its own order, over every GPU of the machine whatever
// CUDA_VISIBLE_DEVICES says, so a CUDA device index is not an NVML index:
// a caller holding a CUDA device opens its meter by the device's PCI
// address. [Device.Index] is then the GPU's NVML index.
func OpenDeviceByPCIBusID(busID string) (*Device, error) {
	return openWith("GPU at PCI "+busID, func() (*Device, error) { return openDeviceByPCIBusID(busID) })
}

// openWith initialises NVML and opens a device with open, letting NVML go
// again when that fails; what names the device in the error.
func openWith(what string, open func() (*Device, error)) (*Device, error) {
	if err := Open(); err != nil {
		return nil, err
	}
	d, err := open()
	if err != nil {
		Close()
		return nil, fmt.Errorf("energy: open %s: %w", what, err)
	}
	return d, nil
}

func openDeviceByPCIBusID(busID string) (*Device, error) {
	h, index, err := bindHandleByPCIBusID(busID)
	if err != nil {
		return nil, err
	}
	return describe(index, h)
}

func openDevice(index int) (*Device, error) {
	h, err := bindHandle(index)
	if err != nil {
		return nil, err
	}
	return describe(index, h)
}

// describe is the Device of h, NVML's GPU index, with its name, UUID and
// the driver's version read.
func describe(index int, h handle) (*Device, error) {
	d := &Device{index: index, h: h}
	var err error
	if d.name, err = h.name(); err != nil {
		return nil, err
	}
	if d.uuid, err = h.uuid(); err != nil {
		return nil, err
	}
	if d.driver, err = bindDriverVersion(); err != nil {
		return nil, err
	}
	return d, nil
}

// Close releases the device and its NVML reference. It is idempotent.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return Close()
}

// do runs f with NVML guaranteed initialised, or returns ErrClosed.
func (d *Device) do(f func() error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	return f()
}

// Index is the NVML device index given to [OpenDevice].
func (d *Device) Index() int { return d.index }

// Name is the product name, e.g. "NVIDIA H100 80GB HBM3".
func (d *Device) Name() string { return d.name }

// UUID is the GPU's UUID, e.g. "GPU-1b2c…".
func (d *Device) UUID() string { return d.uuid }

// DriverVersion is the NVIDIA driver version read when the device was opened.
func (d *Device) DriverVersion() string { return d.driver }

// String describes the device as "GPU <index> <name> (<uuid>)".
func (d *Device) String() string {
	return fmt.Sprintf("GPU %d %s (%s)", d.index, d.name, d.uuid)
}

// PowerLimit returns the enforced power limit in watts (700 W on an H100
// SXM at default settings).
func (d *Device) PowerLimit() (float64, error) {
	var mw uint32
	err := d.do(func() (err error) {
		mw, err = d.h.powerLimitMW()
		return err
	})
	return float64(mw) / 1000, err
}

// EnergyCounter returns NVML's total-energy counter in millijoules since
// the driver was loaded (nvmlDeviceGetTotalEnergyConsumption). It advances
// in steps (about every 100 ms on an H100); use [Device.Measure] for energy
// over a window. GPUs without the counter give an error matching
// [ErrNotSupported].
func (d *Device) EnergyCounter() (uint64, error) {
	var mj uint64
	err := d.do(func() (err error) {
		mj, err = d.h.totalEnergyMJ()
		return err
	})
	return mj, err
}

// PowerSource says which NVML reading a power value came from.
type PowerSource uint8

const (
	// PowerUnknown means no power reading was obtained.
	PowerUnknown PowerSource = iota
	// PowerInstant is field NVML_FI_DEV_POWER_INSTANT.
	PowerInstant
	// PowerAverage is nvmlDeviceGetPowerUsage, a one-second moving average
	// on Ampere (except GA100) and newer GPUs.
	PowerAverage
)

// String returns "instant", "average" or "unknown".
func (s PowerSource) String() string {
	switch s {
	case PowerInstant:
		return "instant"
	case PowerAverage:
		return "average"
	}
	return "unknown"
}

// Power returns the current board power in watts: instantaneous where the
// driver answers FI_DEV_POWER_INSTANT, otherwise the average reading.
func (d *Device) Power() (float64, PowerSource, error) {
	var (
		w   float64
		src PowerSource
	)
	err := d.do(func() (err error) {
		w, src, err = d.power()
		return err
	})
	return w, src, err
}

// power must run inside d.do.
func (d *Device) power() (float64, PowerSource, error) {
	if d.instant.Load() != 2 {
		mw, err := d.h.powerInstantMW()
		if err == nil {
			d.instant.Store(1)
			return mw / 1000, PowerInstant, nil
		}
		if d.instant.Load() == 0 {
			// The field never answered: use the average from now on.
			d.instant.Store(2)
		} else {
			return 0, PowerUnknown, err
		}
	}
	mw, err := d.h.powerUsageMW()
	if err != nil {
		return 0, PowerUnknown, err
	}
	return float64(mw) / 1000, PowerAverage, nil
}
