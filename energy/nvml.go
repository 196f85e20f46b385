package energy

import (
	"errors"
	"fmt"
	"sync"
)

// ErrNoNVML reports that NVML could not be used at all: libnvidia-ml.so.1
// is not installed, the NVIDIA driver is not loaded, or the package was built
// without cgo. Callers should go on without energy measurements.
var ErrNoNVML = errors.New("energy: NVML not available")

// ErrNotSupported reports that the GPU or driver does not support a query
// (NVML_ERROR_NOT_SUPPORTED).
var ErrNotSupported = errors.New("energy: not supported by this GPU or driver")

// ErrClosed is returned by methods of a [Device] after [Device.Close].
var ErrClosed = errors.New("energy: device closed")

// NVMLError is an NVML call that returned something other than success.
// errors.Is matches it against [ErrNoNVML] and [ErrNotSupported] where the
// NVML return code means that.
type NVMLError struct {
	// Op names the NVML call, e.g. "nvmlDeviceGetTotalEnergyConsumption".
	Op string
	// Code is the nvmlReturn_t value.
	Code int
	// Message is NVML's text for Code.
	Message string
}

// NVML return codes this package interprets (values from nvml.h).
const (
	nvmlNotSupported    = 3
	nvmlDriverNotLoaded = 9
	nvmlLibraryNotFound = 12
)

// Error implements error.
func (e *NVMLError) Error() string {
	return fmt.Sprintf("energy: %s: %s (nvml %d)", e.Op, e.Message, e.Code)
}

// Is reports whether e means target: [ErrNoNVML] for a missing library or
// driver, [ErrNotSupported] for NVML_ERROR_NOT_SUPPORTED.
func (e *NVMLError) Is(target error) bool {
	switch target {
	case ErrNoNVML:
		return e.Code == nvmlLibraryNotFound || e.Code == nvmlDriverNotLoaded
	case ErrNotSupported:
		return e.Code == nvmlNotSupported
	}
	return false
}

// lib holds the process-wide NVML reference count. NVML is initialised by
// the first successful Open and shut down when the count returns to zero.
var lib struct {
	mu   sync.Mutex
	refs int
}

// Open initialises NVML for this process, or takes another reference if it
// is already initialised. Every successful Open must be paired with one
// [Close]. Without NVML it returns an error e with errors.Is(e, ErrNoNVML).
//
// [OpenDevice] calls Open itself; call Open directly only to test whether
// NVML is usable or to keep it initialised across devices.
func Open() error {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	if lib.refs > 0 {
		lib.refs++
		return nil
	}
	if err := bindInit(); err != nil {
		return err
	}
	lib.refs = 1
	return nil
}

// Close releases one reference taken by [Open]; the last one shuts NVML
// down. Closing more often than opening returns an error.
func Close() error {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	if lib.refs == 0 {
		return errors.New("energy: Close without matching Open")
	}
	lib.refs--
	if lib.refs > 0 {
		return nil
	}
	return bindShutdown()
}

// withLib runs f while holding a reference to NVML, so package-level queries
// need no prior Open.
func withLib(f func() error) error {
	if err := Open(); err != nil {
		return err
	}
	defer Close()
	return f()
}

// DeviceCount returns the number of GPUs NVML sees.
func DeviceCount() (int, error) {
	var n int
	err := withLib(func() (err error) {
		n, err = bindDeviceCount()
		return err
	})
	return n, err
}

// DriverVersion returns the NVIDIA driver version string, e.g. "580.65.06".
func DriverVersion() (string, error) {
	var v string
	err := withLib(func() (err error) {
		v, err = bindDriverVersion()
		return err
	})
	return v, err
}
