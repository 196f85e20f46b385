"""Breaks the protocol, as steered by argv[1]: "junk" prints a line that is
not JSON where a reply should be; "exit" exits after the ready line;
"silent" never writes its ready line."""
import sys
import time

mode = sys.argv[1]
if mode == "silent":
    time.sleep(30)
    sys.exit(0)
print('{"ok": true, "ready": true, "protocol": 1}', flush=True)
for line in sys.stdin:
    if mode == "junk":
        print("Loading checkpoint shards: 100%", flush=True)
    else:
        print("bad_command: giving up", file=sys.stderr, flush=True)
        sys.exit(3)
