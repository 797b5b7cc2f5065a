"""PROBE (not a hack): an honest kernel that counts how often its process was continued after
being stopped (SIGCONT) and prints the count into its log at each call. On a CPU the judge
stops the candidate's process while it times the baselines' calls (`Session.candidate_held`):
a thread or a process of the candidate's kept busy then would take their cores.
"""

import signal

import torch
import torch.nn as nn

import cuda_extension

_continued = [0]


def _count(signum, frame):
    _continued[0] += 1


signal.signal(signal.SIGCONT, _count)


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        print(f"continued {_continued[0]}", flush=True)
        return cuda_extension.swish(x, self.bias, self.scale)
