"""Honest: the task's own operator, on an output the judge checks call by call."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
