//go:build !cgo

package energy

// go-nvml needs cgo. In a build without cgo every entry point reports
// ErrNoNVML so that callers fall back to timing without energy.

import "fmt"

var errNoCgo = fmt.Errorf("%w: package built without cgo", ErrNoNVML)

func bindInit() error                    { return errNoCgo }
func bindShutdown() error                { return errNoCgo }
func bindDeviceCount() (int, error)      { return 0, errNoCgo }
func bindDriverVersion() (string, error) { return "", errNoCgo }

type handle struct{}

func bindHandle(int) (handle, error) { return handle{}, errNoCgo }

func bindHandleByPCIBusID(string) (handle, int, error) { return handle{}, 0, errNoCgo }

func (handle) name() (string, error)            { return "", errNoCgo }
func (handle) uuid() (string, error)            { return "", errNoCgo }
func (handle) powerLimitMW() (uint32, error)    { return 0, errNoCgo }
func (handle) smClockMHz() (uint32, error)      { return 0, errNoCgo }
func (handle) memClockMHz() (uint32, error)     { return 0, errNoCgo }
func (handle) maxSMClockMHz() (uint32, error)   { return 0, errNoCgo }
func (handle) maxMemClockMHz() (uint32, error)  { return 0, errNoCgo }
func (handle) memoryBusWidth() (uint32, error)  { return 0, errNoCgo }
func (handle) temperatureC() (uint32, error)    { return 0, errNoCgo }
func (handle) powerInstantMW() (float64, error) { return 0, errNoCgo }
func (handle) powerUsageMW() (uint32, error)    { return 0, errNoCgo }
func (handle) clockReasons() (uint64, error)    { return 0, errNoCgo }
func (handle) totalEnergyMJ() (uint64, error)   { return 0, errNoCgo }
