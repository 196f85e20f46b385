"""The events of a finished torch.profiler session, for the probes here:
exported as Kineto's Chrome-trace JSON into a temporary file and read back."""
import json
import os
import tempfile


def events(prof):
    """prof's trace events (the traceEvents list of its exported trace)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f)["traceEvents"]
    finally:
        os.unlink(path)
