package captured

// FirstLaunchError says that a captured kernel failed on its first
// launch, the one New makes before any measurement (findRestores, or the
// module choice when several define it): a device-side assert or an
// illegal address there loses the CUDA context. Kernel names the kernel
// that failed, the launch's mangled function name, so that a caller can
// leave out the other replays that would launch it on the same captured
// data (package replay's ContextLostError). A producer's failure comes
// wrapped in its consumer's error ("its producer NAME: ..."), and
// errors.As finds it, naming the producer.
type FirstLaunchError struct {
	// Kernel is the launch's function name, as recorded.
	Kernel string
	// Err is the CUDA error the launch or its synchronization returned.
	Err error
}

// Error formats e as "KERNEL: first launch: ERR".
func (e *FirstLaunchError) Error() string {
	if e.Err == nil {
		return e.Kernel + ": first launch failed"
	}
	return e.Kernel + ": first launch: " + e.Err.Error()
}

// Unwrap returns the CUDA error.
func (e *FirstLaunchError) Unwrap() error { return e.Err }
