package energy_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/kreplay/kreplay/energy"
)

// Measure the energy per call of a replayed kernel. Without NVML the
// caller goes on timing without energy.
func Example() {
	dev, err := energy.OpenDevice(0)
	if errors.Is(err, energy.ErrNoNVML) {
		return // no energy here: time only
	}
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()

	idle, err := dev.IdlePower(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}

	replay := func() error {
		// Launch the kernel replay and synchronise the stream here.
		return nil
	}
	r, err := dev.Measure(context.Background(), replay, energy.MeasureOptions{}) // >= 101 ticks
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %.4g J/call, %.1f W (idle %.1f W), tick share %.2f%%\n",
		dev.Name(), r.JoulesPerCall, r.Watts, idle.Watts, 100*r.TickEnergyShare)
	if r.States.Throttled() {
		fmt.Println("throttled:", r.States.ThrottleReasons)
	}
}
