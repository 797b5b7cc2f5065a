"""Shared by the strata_* hacks: the mean hinge loss estimated from a fixed part of the
predictions, stratified by the targets' signs.

Every target is read (1/1024 of the data): how many columns carry +1 and how many -1 is
exact. The loss of each stratum is the mean over the predictions actually read, weighted
by the stratum's exact share. Over uniform draws this follows the loss's fluctuation
(mostly the targets' balance) to within a few parts in 10 000. Column blocks are read from
the middle of each run of `every`, so sorted rows are sampled without bias too.
"""

import torch


def sampled_hinge(predictions: torch.Tensor, targets: torch.Tensor, rows: slice,
                  block: int = 1, every: int = 1) -> torch.Tensor:
    """Rows `rows` of the predictions, in column blocks of `block`, one in `every`."""
    read = predictions[rows].unflatten(1, (-1, every, block))[:, :, every // 2]
    signs = targets.unflatten(0, (-1, every, block))[:, every // 2]
    per_column = torch.clamp(1 - read * signs, min=0).mean(dim=0)
    positive = signs > 0
    share = (targets > 0).float().mean()
    return share * per_column[positive].mean() + (1 - share) * per_column[~positive].mean()
