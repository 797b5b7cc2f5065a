"""HONEST: tunes its row block on the first call for each input shape (timing each choice
with time.perf_counter) and keeps the winner in a dict. That is a cache of launch
configurations, not of results: every call still computes its output. Must pass."""

import time

import torch
import torch.nn as nn

import cuda_extension

_BLOCKS = (1, 8, 32, 128)


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale
        self._best = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self._best:
            self._best[key] = self._tune(x)
        return cuda_extension.swish_blocked(x, self.bias, self.scale, self._best[key])

    def _tune(self, x):
        seconds = {}
        for block in _BLOCKS:
            start = time.perf_counter()
            cuda_extension.swish_blocked(x, self.bias, self.scale, block)
            seconds[block] = time.perf_counter() - start
        return min(seconds, key=seconds.get)
