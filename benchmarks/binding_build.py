"""A new candidate folder's build, with and without the precompiled binding header.

    python benchmarks/binding_build.py                          # examples/fused_swish_cpu
    python benchmarks/binding_build.py examples/fused_swish_cuda --repeat 3

Builds the example's `kernels/` in new folders against a new cache: once to keep the
judge's entry object, twice more without the header (the first of them asks for it, and it
is made beside the second), then waits for the header and builds `--repeat` more folders
with it. Each folder's build compiles
everything of its own, as a new candidate's does. Prints each build's seconds as it ends
and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.judge import build_kernels  # noqa: E402
from cudaopt.judge.building import pch  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("example", nargs="?", type=Path,
                        default=ROOT / "examples" / "fused_swish_cpu")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = root / "cache" / "kernels"

        def build(label: str, n: int) -> float:
            kernels = root / f"k{n}"
            shutil.copytree(args.example / "kernels", kernels)
            # a new folder's own comment: other content, so the store cannot serve it
            first = sorted(kernels.glob("*_binding.cpp"))[0]
            first.write_text(first.read_text() + f"\n// build {n}\n")
            result = build_kernels(kernels, root / f"b{n}", 900, store)
            if not result.ok:
                sys.exit(result.log[-3000:])
            print(f"{label:<16} {result.seconds:7.2f} s  compiled {', '.join(result.rebuilt)}",
                  flush=True)
            return result.seconds

        build("entry kept", 0)
        plain = [build("without header", 1)]
        asked = time.perf_counter()  # the second binding compile asked for the header
        plain.append(build("without header", 2))
        [where] = (root / "cache" / "pch").iterdir()
        while pch.ready(where) is None:
            if time.perf_counter() - asked > 600:
                sys.exit("the header was not made within 10 minutes (is the compiler g++?)")
            time.sleep(0.2)
        print(f"{'header made':<16} {time.perf_counter() - asked:7.2f} s after it was asked "
              "(beside the build above)", flush=True)
        with_header = [build("with header", 3 + n) for n in range(args.repeat)]
        ratio = statistics.median(plain) / statistics.median(with_header)
        print(f"median {statistics.median(plain):.2f} s without, "
              f"{statistics.median(with_header):.2f} s with: {ratio:.2f}x")


if __name__ == "__main__":
    main()
