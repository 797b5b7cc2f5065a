"""The output-follows-input logic on plain tensors: what varies, what follows."""

from __future__ import annotations

import torch

from cudaopt.judge import outputs_vary
from cudaopt.judge.checks.signal import (
    follows,
    perturbed,
    positions,
    sample,
    sits_at_scale,
    written_grid,
)


def _softmax_rows(seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(2, 100_000, generator=gen), dim=1)


def test_a_long_softmax_varies_although_every_value_is_below_atol() -> None:
    outs = [_softmax_rows(s) for s in range(3)]
    assert max(float(o.max()) for o in outs) < 1e-2 / 10
    assert outputs_vary(outs, atol=1e-2, rtol=1e-2)


def test_constant_and_identical_outputs_do_not_vary() -> None:
    assert not outputs_vary([torch.ones(3), torch.ones(3), torch.ones(3)], 1e-2, 1e-2)
    assert not outputs_vary([torch.tensor(1.0), torch.tensor(1.0 + 1e-4)], 1e-2, 1e-2)
    assert not outputs_vary([torch.zeros(5)], 1e-2, 1e-2)


def test_nested_outputs_and_integer_leaves() -> None:
    a = (torch.ones(2), {"i": torch.tensor([1, 2])})
    b = (torch.ones(2), {"i": torch.tensor([1, 3])})
    assert outputs_vary([a, b], 1e-2, 1e-2)
    assert not outputs_vary([a, a], 1e-2, 1e-2)
    assert outputs_vary([torch.ones(2), torch.ones(3)], 1e-2, 1e-2)


def test_zeros_do_not_follow_a_small_softmax_but_a_bf16_copy_does() -> None:
    where = positions(200_000, seed=7)
    refs = [sample(_softmax_rows(s), where) for s in range(4)]
    zeros = [torch.zeros_like(r) for r in refs]
    assert follows(refs, zeros, floor=1e-2) is not None
    bf16 = [r.to(torch.bfloat16).to(torch.float64) for r in refs]
    assert follows(refs, bf16, floor=1e-2) is None


def test_a_constant_does_not_follow_a_loss_whose_inputs_change_scale() -> None:
    refs = [torch.tensor([v]) for v in (1.001, 0.998, 3.2, 0.35)]
    assert follows(refs, [torch.tensor([1.0])] * 4, floor=1e-2) is not None
    assert follows(refs, [r + 1e-3 for r in refs], floor=1e-2) is None


def test_variation_inside_the_tolerance_resolution_is_not_demanded() -> None:
    """Fresh draws of a mean loss alone move it by 0.3%: no kernel is held to that."""
    refs = [torch.tensor([v]) for v in (1.001, 0.998, 1.003)]
    assert follows(refs, [torch.tensor([1.0])] * 3, floor=1e-2) is None


def _group_norm_mean(x: torch.Tensor, chunks: int) -> torch.Tensor:
    """Mean of group-normalised values: zero whatever the input, up to rounding (KernelBench
    level2/23_Conv3d_GroupNorm_Mean); `chunks` changes the summation order."""
    normed = torch.nn.functional.group_norm(x, 2)
    return torch.stack([c.sum() for c in normed.reshape(-1).chunk(chunks)]).sum() / x.numel()


def test_an_output_that_is_rounding_noise_neither_varies_nor_binds_an_honest_kernel() -> None:
    draws = [torch.randn(4, 8, 64, generator=torch.Generator().manual_seed(s))
             for s in range(5)]
    refs = [_group_norm_mean(x, 1).reshape(1) for x in draws]
    honest = [_group_norm_mean(x, 7).reshape(1) for x in draws]
    noise = _group_norm_mean(perturbed([draws[0]], seed=3)[0], 1).reshape(1)
    assert outputs_vary(refs, 1e-2, 1e-2)  # relative to its own scale, without the noise
    assert not outputs_vary(refs, 1e-2, 1e-2, noise=noise)
    level = float((noise - refs[0]).abs())
    assert follows(refs, honest, floor=1e-2, noise=level) is None
    assert follows(refs, [torch.zeros(1)] * 5, floor=1e-2, noise=level) is None


def test_a_small_output_is_held_to_its_own_scale_where_it_stands_above_rounding() -> None:
    where = positions(200_000, seed=5)
    refs = [sample(_softmax_rows(s), where) for s in range(4)]
    offset = [r + 1e-3 for r in refs]  # follows every move, a tenth of atol, 30x the values
    assert follows(refs, offset, floor=1e-2) is None
    assert sits_at_scale(refs, offset, noise=1e-12) is not None
    bf16 = [r.to(torch.bfloat16).to(torch.float64) for r in refs]
    assert sits_at_scale(refs, bf16, noise=1e-12) is None
    assert sits_at_scale(refs, offset, noise=None) is None  # no noise measured: not held
    draws = [torch.randn(4, 8, 64, generator=torch.Generator().manual_seed(s))
             for s in range(5)]
    zero = [torch.stack([_group_norm_mean(x + i, 1) for i in range(64)]) for x in draws]
    honest = [torch.stack([_group_norm_mean(x + i, 7) for i in range(64)]) for x in draws]
    moved = perturbed([draws[0]], seed=3)[0]
    noise = torch.stack([_group_norm_mean(moved + i, 1) for i in range(64)]) - zero[0]
    level = float(noise.square().mean().sqrt())  # rounding alone, as the judge measures it
    assert sits_at_scale(zero, honest, noise=level) is None
    exact = [torch.zeros(64)] * 5  # computed exactly: zero, where float32 rounds
    assert sits_at_scale(zero, exact, noise=level) is None
    assert sits_at_scale(zero, exact, noise=level / 1e3) is not None  # the noise spares it
    assert sits_at_scale(zero, exact, noise=0.0) is None  # no rounding seen: not held
    assert sits_at_scale([z[:1] for z in zero], [e[:1] for e in exact], noise=level / 1e3) is None


def test_the_dtype_a_candidate_writes_is_read_from_its_values() -> None:
    gen = torch.Generator().manual_seed(3)
    refs = [torch.randn(256, generator=gen, dtype=torch.float64) for _ in range(4)]
    as_bf16 = [r.to(torch.bfloat16).to(torch.float64) for r in refs]
    as_fp16 = [r.to(torch.float16).to(torch.float64) for r in refs]
    assert written_grid(as_bf16, refs) == torch.bfloat16
    assert written_grid(as_fp16, refs) == torch.float16
    assert written_grid(refs, refs) is None  # finer than either grid
    assert written_grid(as_bf16, as_bf16) is None  # the reference writes bf16 itself
    one = torch.ones(256, dtype=torch.float64)
    assert written_grid([one] * 4, refs) is None  # a constant shows no dtype at all
