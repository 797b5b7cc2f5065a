"""The signal checks' memory across one judgement: the reference's and the candidate's
outputs, trial after trial, sampled at positions secret to the reference's process, and
the findings of `signal`'s rules over them."""

from __future__ import annotations

import torch

from cudaopt.judge.checks.signal import (
    RULE,
    SCALE_RULE,
    all_finite,
    follows,
    follows_closely,
    positions,
    sample,
    sits_at_scale,
    written_grid,
)


def _floor(dtype: torch.dtype, rtol: float, fresh: bool) -> float:
    """How much of its own scale the reference must move before the candidate is held to
    following it: `rtol` over all inputs; over fresh draws alone (the inputs the timed calls
    get) the output dtype's resolution, so a statistic of the draws is held to its own
    fluctuation where the dtype can carry it."""
    if not fresh or not dtype.is_floating_point:
        return rtol
    return min(rtol, 256 * torch.finfo(dtype).eps)


def _rms(values: list[torch.Tensor]) -> float:
    """RMS over every finite value of every tensor; 0.0 for none."""
    flat = torch.cat([v.reshape(-1) for v in values]) if values else torch.zeros(0)
    flat = flat if all_finite(flat) else flat[torch.isfinite(flat)]
    return float(flat.square().mean().sqrt()) if flat.numel() else 0.0


class Tracker:
    """Samples of the reference's and the candidate's output leaves, input after input, at
    positions secret to the reference's process; `findings` applies `follows` to each."""

    def __init__(self) -> None:
        self.rows: list[tuple[bool, list[torch.Tensor], list[torch.Tensor]]] = []
        self.dtypes: list[torch.dtype] = []
        self._where: dict[tuple[int, int], torch.Tensor | None] = {}
        self.seed = 0
        self.noise: list[float] = []  # per float leaf, RMS (see `perturbed`)

    def reset(self, seed: int) -> None:
        self.rows, self.dtypes, self._where, self.seed, self.noise = [], [], {}, seed, []

    def measure_noise(self, perturbed_reference: list[torch.Tensor]) -> None:
        """The reference's output on `perturbed` inputs of the first recorded input."""
        if not self.rows:
            return
        floats = [t for t in perturbed_reference if t.is_floating_point()]
        first = self.rows[0][1]
        if len(floats) != len(first):
            return
        self.noise = []
        for i, (t, r) in enumerate(zip(floats, first, strict=True)):
            moved = sample(t, self._positions(i, t.numel())) - r
            moved = moved[torch.isfinite(moved)]
            self.noise.append(float(moved.square().mean().sqrt()) if moved.numel() else 0.0)

    def record(self, reference: list[torch.Tensor], candidate: list[torch.Tensor],
               fresh: bool) -> None:
        """One input's float leaves (same shapes on both sides; others are left out)."""
        pairs = [(i, r, c) for i, (r, c) in enumerate(zip(reference, candidate, strict=True))
                 if r.is_floating_point()]
        if any(c.shape != r.shape or not c.is_floating_point() for _, r, c in pairs):
            return
        where = [self._positions(i, r.numel()) for i, r, _ in pairs]
        self.dtypes = [r.dtype for _, r, _ in pairs]
        self.rows.append((fresh, [sample(r, w) for (_, r, _), w in zip(pairs, where, strict=True)],
                          [sample(c, w) for (_, _, c), w in zip(pairs, where, strict=True)]))

    def _noise_at(self, leaf: int, reference: list[torch.Tensor]) -> float:
        """The rounding noise measured on the first fresh draw, grown with the reference's
        values over `reference` against the fresh draws' (never shrunk): rounding is
        relative to them, and a derived input (raised strata) can make them a thousand
        times larger, a mean of centred values' rounding alone with them."""
        noise = self.noise[leaf] if leaf < len(self.noise) else 0.0
        fresh = _rms([r[leaf] for is_fresh, r, _ in self.rows if is_fresh])
        return noise * max(1.0, _rms(reference) / fresh) if fresh > 0 else noise

    def _positions(self, leaf: int, numel: int) -> torch.Tensor | None:
        key = (leaf, numel)
        if key not in self._where:
            self._where[key] = positions(numel, self.seed + leaf)
        return self._where[key]

    def stale(self) -> int | None:
        """The earlier input (index) whose output the candidate returned again, bit for bit,
        for the last input, where the reference's output changed: a result kept from an
        earlier call. A candidate whose outputs never changed over three inputs or more
        is a constant, not a cache (the signal check names that)."""
        if len(self.rows) < 2:
            return None
        _, ref_now, cand_now = self.rows[-1]
        unchanged = [all(torch.equal(c, n) for c, n in zip(cand, cand_now, strict=True))
                     for _, _, cand in self.rows]
        if len(self.rows) >= 3 and all(unchanged):
            return None
        for index in range(len(self.rows) - 2, -1, -1):
            _, ref_then, cand_then = self.rows[index]
            if (all(torch.equal(c, n) for c, n in zip(cand_then, cand_now, strict=True))
                    and not all(torch.equal(r, n) for r, n in zip(ref_then, ref_now,
                                                                  strict=True))):
                return index
        return None

    def findings(self, rtol: float, scale: bool = True) -> list[str]:
        """Violations, each opening with its rule, leaf by leaf: outputs that do not follow
        the reference's over every input, then over the task's fresh draws alone (at the
        resolution of the dtype the candidate wrote, `written_grid`; a few-valued output up
        to rounding, `follows_closely`); then with `scale`, outputs that miss the
        reference's at their own scale over two or more of those draws, whose scale the
        rounding noise was measured at (`sits_at_scale`)."""
        written = [written_grid([c[leaf] for _, _, c in self.rows],
                                [r[leaf] for _, r, _ in self.rows]) or dtype
                   for leaf, dtype in enumerate(self.dtypes)]
        for fresh_only in (False, True):
            found = self._unfollowed(written, rtol, fresh_only)
            if found:
                return found
        fresh = [(r, c) for is_fresh, r, c in self.rows if is_fresh]  # the noise's scale
        found = []
        for leaf in range(len(self.dtypes) if scale and len(fresh) >= 2 else 0):
            noise = self.noise[leaf] if leaf < len(self.noise) else None
            why = sits_at_scale([r[leaf] for r, _ in fresh], [c[leaf] for _, c in fresh], noise)
            if why:
                found.append(f"{SCALE_RULE}: output leaf {leaf}: {why}")
        return found

    def _unfollowed(self, written: list[torch.dtype], rtol: float,
                    fresh_only: bool) -> list[str]:
        """`follows` over every input or the fresh draws alone (three or more), leaf by
        leaf; over the fresh draws, `follows_closely` too."""
        rows = [(r, c) for fresh, r, c in self.rows if fresh or not fresh_only]
        if len(rows) < 3:
            return []
        where = "the task's own draws" if fresh_only else "all inputs"
        found = []
        for leaf, dtype in enumerate(written):
            ref, cand = [r[leaf] for r, _ in rows], [c[leaf] for _, c in rows]
            noise = self._noise_at(leaf, ref)
            why = follows(ref, cand, _floor(dtype, rtol, fresh_only), noise)
            if not why and fresh_only:
                why = follows_closely(ref, cand, dtype, noise)
            if why:
                found.append(f"{RULE}: output leaf {leaf}, over {where}: {why}")
        return found
