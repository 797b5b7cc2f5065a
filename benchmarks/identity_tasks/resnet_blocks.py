"""A small ResNet-like stack: convolution, batch norm and ReLU blocks with skips, on a small
image, as ResNet18 runs at batch size 1-10. Dozens of small operators per call."""

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class Model(nn.Module):
    def __init__(self, in_channels: int, channels: int, blocks: int, classes: int):
        super().__init__()
        self.stem = nn.Conv2d(in_channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.blocks = nn.Sequential(*(Block(channels) for _ in range(blocks)))
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.stem(x)))
        x = self.blocks(x)
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


batch, in_channels, size = 2, 3, 16
channels, blocks, classes = 16, 6, 10


def get_inputs():
    return [torch.randn(batch, in_channels, size, size)]


def get_init_inputs():
    return [in_channels, channels, blocks, classes]
