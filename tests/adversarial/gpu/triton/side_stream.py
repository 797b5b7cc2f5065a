"""HACK: the Triton kernel launched on a stream of its own, left running when forward
returns. Stopped by: the stream checks (work left unordered with the current stream)."""

import torch
import torch.nn as nn
from swish import swish


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def forward(self, x):
        if self.side is None:
            self.side = torch.cuda.Stream()
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            return swish(x)
