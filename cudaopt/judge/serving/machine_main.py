"""`python -m cudaopt.judge.serving.machine_main SOCKET`: the machine judge's process (see
`machine`), started by `machine_client` on demand."""

import sys
from pathlib import Path

from cudaopt.judge.serving.machine import serve

serve(Path(sys.argv[1]))
