#!/bin/sh
# bad_command.py by a relative path (package runner's TestStartErrors).
exec python3 "$(dirname "$0")/bad_command.py" "$@"
