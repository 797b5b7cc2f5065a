"""Inputs of other structure keep each input's shape, dtype, layout and meaning."""

from __future__ import annotations

import random
import weakref

import pytest
import torch

from cudaopt.judge.checks.variants import MAGNITUDE, ORDER, derive, kind_of, plan


def _draw(seed: int) -> list:
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(16, 16, generator=gen)
    return [
        torch.randn(8, 32, generator=gen),  # real
        torch.rand(8, 32, generator=gen),  # non-negative
        torch.softmax(torch.randn(8, 32, generator=gen), dim=-1),  # rows of probabilities
        torch.randint(0, 2, (32,), generator=gen).float() * 2 - 1,  # ±1 targets
        torch.randint(0, 10, (8,), generator=gen),  # class indices
        a @ a.T + 16 * torch.eye(16),  # positive definite
        torch.randn(32, 8, generator=gen).T,  # a transposed view
        3,  # not a tensor
    ]


@pytest.mark.parametrize("kind", MAGNITUDE + ORDER)
def test_every_transform_keeps_shapes_dtypes_layouts_and_meanings(kind: str) -> None:
    drawn = _draw(0)
    out = derive(list(drawn), {"kinds": [kind], "seed": 5, "mix_seed": 6}, _draw)
    assert out[7] == 3
    for before, after in zip(drawn[:7], out[:7], strict=True):
        assert after.shape == before.shape and after.dtype == before.dtype
        assert after.stride() == before.stride()
        assert torch.isfinite(after.float()).all()
    real, nonneg, simplex, signs, labels, spd, _ = out[:7]
    assert (nonneg >= 0).all()
    assert (simplex >= 0).all() and torch.allclose(simplex.sum(-1), torch.ones(8), atol=1e-4)
    assert set(signs.tolist()) <= {-1.0, 1.0}
    assert labels.min() >= 0 and labels.max() < 10
    assert torch.allclose(spd, spd.T, atol=1e-4)
    assert torch.linalg.eigvalsh(spd.double()).min() > 0


def test_derivation_is_deterministic_and_the_magnitude_transforms_change_values() -> None:
    for kind in MAGNITUDE:
        variant = {"kinds": [kind], "seed": 11, "mix_seed": 12}
        first, again = derive(_draw(1), variant, _draw), derive(_draw(1), variant, _draw)
        assert all(torch.equal(a, b) for a, b in zip(first[:7], again[:7], strict=True))
        assert not torch.equal(first[0], _draw(1)[0]), kind


def test_what_each_input_is_taken_to_mean() -> None:
    assert [kind_of(x) for x in _draw(2)[:7]] == [
        "real", "nonneg", "simplex", "discrete", "discrete", "symmetric", "real"]


def test_every_plan_holds_a_rescaling_outliers_with_strata_and_a_rescaled_block() -> None:
    rng = random.Random(3)
    for _ in range(50):
        variants = plan(rng.random, lambda: rng.randrange(1 << 30))
        kinds = {k for v in variants for k in v["kinds"]}
        assert len(variants) == 3 and {"spiky", "block", "strata"} <= kinds
        assert kinds & {"scale", "rowscale"} and kinds & set(ORDER)
        spiky = next(v["kinds"] for v in variants if v["kinds"][0] == "spiky")
        assert spiky[-1] == "strata"  # after any mask that would thin the raised slices


SAMPLERS = {  # a mean read from a fixed part of a 256 x 256 input, one way or another
    "one column block in 16": lambda x: x.unflatten(1, (-1, 16, 4))[:, :, 8].mean(),
    "every 16th column": lambda x: x[:, 7::16].mean(),
    "every other row": lambda x: x[::2].mean(),
    "one row block in 16": lambda x: x[:16].mean(),
    "every 16th element": lambda x: x.reshape(-1)[5::16].mean(),
}


@pytest.mark.parametrize("draw", [torch.rand, torch.randn], ids=["nonneg", "real"])
def test_raised_strata_move_the_mean_where_no_fixed_part_of_the_input_sees_it(draw) -> None:
    """Rescaled rows, a rescaled stretch of memory, outliers: a sampler reading a fixed part
    along some dimension sees each as the whole input does. The strata it cannot: on every
    seed tried each sampler misses the mean by more than the tolerance."""
    for seed in range(20):
        x = draw(256, 256, generator=torch.Generator().manual_seed(seed))
        x = derive([x], {"kinds": ["strata"], "seed": seed, "mix_seed": 0}, _draw)[0]
        full = float(x.mean())
        for name, sampled in SAMPLERS.items():
            assert abs(float(sampled(x)) - full) > 1e-2 + 1e-2 * abs(full), (seed, name)


def test_derivation_frees_each_drawn_tensor_and_sorts_in_chunks() -> None:
    """KernelBench inputs reach 16 GiB, and two workers derive them on one device: the
    drawn tensor must not outlive its derivation (the caller's list is consumed), and a
    sort of rows longer than one chunk still sorts every row whole."""
    inputs = [torch.rand(3, 1 << 21), torch.rand(8)]
    drawn = weakref.ref(inputs[0])
    copy = inputs[0].clone()
    out = derive(inputs, {"kinds": ["sort"], "seed": 1, "mix_seed": 2}, _draw)
    assert inputs == [None, None] and drawn() is None
    assert torch.equal(out[0], copy.sort(dim=-1).values)
