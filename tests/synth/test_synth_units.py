"""Similarity and composition without running anything: the parts the filters and the
reproducibility promise rest on."""

from __future__ import annotations

from cudaopt.synth.api import cache_dir
from cudaopt.synth.catalog import load_catalog, rules
from cudaopt.synth.codegen import render
from cudaopt.synth.compose import rng_for, sample
from cudaopt.synth.shapes import trace
from cudaopt.synth.similarity import api_calls, similarity, tokens
from tests.synth.test_synth_filters import GOOD


def test_a_renamed_copy_scores_one_and_another_composition_below_the_threshold() -> None:
    source = GOOD.strip("`").removeprefix("python\n")
    renamed = (source.replace("self.fc", "self.proj").replace("(self, x)", "(self, inp)")
               .replace("(x)", "(inp)").replace("128", "96").replace("F.gelu", "fn.gelu")
               .replace("import torch.nn.functional as F", "from torch.nn import functional as fn"))
    other = source.replace("F.gelu", "torch.tanh")
    assert similarity(tokens(source), tokens(renamed)) == 1.0
    assert similarity(tokens(source), tokens(other)) < 0.9


def test_compositions_are_a_pure_function_of_seed_and_attempt() -> None:
    catalog, weights = load_catalog(cache_dir()), rules()["ops_weights"]
    ops = {op["id"]: op for op in catalog}
    sources = []
    for _ in range(2):
        comps = [sample(catalog, rng_for(5, attempt), 5, weights) for attempt in range(12)]
        sources.append([render(trace(c, ops, 4), "") for c in comps if c])
    assert sources[0] == sources[1] and len(set(sources[0])) > 6
    assert {op["family"] for op in catalog} >= {"elementwise", "reduction", "matmul", "conv",
                                                 "norm", "pooling", "activation"}


def test_a_model_written_task_is_named_after_the_operators_it_calls() -> None:
    source = GOOD.strip("`").removeprefix("python\n")
    assert api_calls(source) == ["nn.Linear", "F.gelu"]
