"""torch.compile's check of the CPU's vector instructions is made once per machine: a later
process takes the kept answer instead of loading a library per instruction set in new
Pythons, and compiles exactly as before (its inductor cache keys unchanged)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from cudaopt.judge.building import vec_isa
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                                reason="the kept answer is for x86 CPUs only")

#: A baseline's compile as the reference role makes it, with the library loads counted;
#: `refuse` names an instruction set whose load fails.
COMPILE = """
import json, sys, torch
from torch._dynamo.utils import counters
from torch._inductor import cpu_vec_isa
from cudaopt.judge.building import vec_isa

loads, probe = [], cpu_vec_isa.VecISA._probe_load
def counted(self, path):
    loads.append(str(self))
    return str(self) != sys.argv[1] and probe(self, path)
cpu_vec_isa.VecISA._probe_load = counted
with vec_isa.kept_vec_isa():
    torch.compile(lambda x: x * torch.sigmoid(x) + 3)(torch.randn(64))
print(json.dumps({"loads": loads, "valid": [str(i) for i in cpu_vec_isa.valid_vec_isa_list()],
                  "hits": counters["inductor"].get("fxgraph_cache_hit", 0)}))
"""


def _compile(cache: Path, refuse: str = "") -> dict:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache)}
    env.pop("TORCHINDUCTOR_VEC_ISA_OK", None)
    done = subprocess.run([sys.executable, "-c", COMPILE, refuse], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_answer_is_kept_only_where_every_set_passed_and_later_compiles_stay_cached(
        tmp_path: Path) -> None:
    from torch._inductor import cpu_vec_isa

    listed = sorted(vec_isa._listed(cpu_vec_isa))
    if not listed:
        pytest.skip("the CPU lists no vector instruction set torch knows")
    refused = _compile(tmp_path, refuse=listed[0])
    assert refused["loads"] and listed[0] not in refused["valid"]
    assert not (tmp_path / vec_isa.FOLDER).exists(), "a set failed: no answer kept"
    first = _compile(tmp_path)
    assert first["loads"], "with no answer kept, the next process checks again"
    if not first["valid"]:
        pytest.skip(f"this compiler builds for none of the CPU's sets ({first['loads']})")
    assert len(list((tmp_path / vec_isa.FOLDER).iterdir())) == 1
    second = _compile(tmp_path)
    assert second["loads"] == [], "the answer was kept: no library loaded again"
    assert second["valid"] == first["valid"]
    assert second["hits"] == 1, "the same inductor cache key: the compile was a cache hit"
