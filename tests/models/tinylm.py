"""A small transformer-style model written for the tests: norm, MLP, attention, repeated layers.

`build` follows the ENTRY contract: it returns (model, inputs) and takes the device.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MLP(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape  # unpacking a shape: symbolic tracing cannot follow this
        q, k, v = self.qkv(x).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.norm1 = RMSNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = RMSNorm(dim)
        self.mlp = MLP(dim, 4 * dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 32, heads: int = 4, layers: int = 3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def build(device: str = "cpu", dtype: torch.dtype = torch.float32):
    torch.manual_seed(0)
    model = TinyLM().to(device=device, dtype=dtype).eval()
    tokens = torch.randint(0, 64, (2, 16), device=device)
    return model, (tokens,)


def build_bf16(device: str = "cuda"):
    """A GPU-sized bf16 model: 4 layers of width 1024 over 8 x 256 tokens."""
    torch.manual_seed(0)
    model = TinyLM(vocab=1024, dim=1024, heads=16, layers=4).to(device, torch.bfloat16).eval()
    return model, (torch.randint(0, 1024, (8, 256), device=device),)


def build_wrong_shape():
    """Like `build` but wider: a kernel made for `build`'s layers must be refused here."""
    torch.manual_seed(0)
    return TinyLM(dim=48).eval(), (torch.randint(0, 64, (2, 16)),)


def not_a_pair():
    return TinyLM()


def build_short():
    """`build`'s model on shorter sequences: same weights, other input shapes."""
    model, (tokens,) = build()
    return model, (tokens[:, :8],)


class Gate(nn.Module):
    """Data-dependent control flow: symbolic tracing fails, so its task imports this file."""

    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        if x.mean() > 0:
            return self.proj(x)
        return -self.proj(x)


def build_gated():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), Gate(16)).eval()
    return model, (torch.randn(4, 8) + 0.5,)
