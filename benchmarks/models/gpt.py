"""A small GPT (nanoGPT's shape) written once against the torch API: ``build(torch)`` runs it
on torch or on npgrad (``import npgrad as torch`` is the point of npgrad).

The training step of issue 16's benchmark: 2 layers, 2 heads, n_embd 64, block 32,
vocab 65 (character-level Shakespeare's alphabet), batch 8, AdamW.  Parameters are
set from one NumPy generator so both libraries start from the same weights and
compute the same losses.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class GPTConfig:
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 64
    block_size: int = 32
    vocab_size: int = 65
    batch_size: int = 8
    lr: float = 1e-3
    weight_decay: float = 0.1


def build(torch: Any, config: GPTConfig = GPTConfig()) -> tuple:
    """(model, optimizer, x, y, step): ``step()`` runs one training step and returns the loss."""
    nn = torch.nn
    F = torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd)
            mask = torch.tril(torch.ones(config.block_size, config.block_size))
            self.register_buffer("mask", mask.view(1, 1, config.block_size, config.block_size))

        def forward(self, x: Any) -> Any:
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(config.n_embd, dim=2)
            hs = C // config.n_head
            q = q.view(B, T, config.n_head, hs).transpose(1, 2)
            k = k.view(B, T, config.n_head, hs).transpose(1, 2)
            v = v.view(B, T, config.n_head, hs).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

        def forward(self, x: Any) -> Any:
            return self.c_proj(F.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(config.n_embd)
            self.mlp = MLP()

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(config.vocab_size, config.n_embd)
            self.wpe = nn.Embedding(config.block_size, config.n_embd)
            self.blocks = nn.ModuleList([Block() for _ in range(config.n_layer)])
            self.ln_f = nn.LayerNorm(config.n_embd)
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

        def forward(self, idx: Any, targets: Any) -> Any:
            T = idx.shape[1]
            pos = torch.arange(0, T, dtype=torch.long)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.blocks:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    model = GPT()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            values = rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.02
            if p.dim() == 1:     # LayerNorm weights 1, biases 0, as the modules initialise them
                values = np.full_like(values, 1.0 if name.endswith("weight") else 0.0)
            p.copy_(torch.from_numpy(values))
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr,
                                  weight_decay=config.weight_decay)
    data = np.random.default_rng(1).integers(0, config.vocab_size,
                                             (config.batch_size, config.block_size + 1))
    x = torch.from_numpy(data[:, :-1].copy())
    y = torch.from_numpy(data[:, 1:].copy())

    def step() -> float:
        loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()

    return model, optimizer, x, y, step
