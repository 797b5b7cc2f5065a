"""A local slot process: `python -m cudaopt.executor FD NAME DEVICE GPU ROOT SANDBOX [PLUGIN…]`."""

import sys

from cudaopt.executor.slot import main

main(sys.argv[1:])
