#!/usr/bin/env python3
"""A small LLaMA-style decoder with seeded weights: a prefill and a greedy decode.

Token embedding, decoder layers (RMSNorm, rotary self-attention with a KV cache, SwiGLU MLP),
a final RMSNorm and an LM head. The outermost module calls each of them directly, so under the
probe they are the layer-level ops (one round per forward: the prefill is round 0, each
decoded token the next). Runs on CPU in about a second.

    /usr/bin/python3 llama_demo.py [--tokens 8] [--layers 4] [--dtype float32|bfloat16]
                                   [--save-logits FILE] [--save-reference DIR]
                                   [--nan-layer K --nan-step S] [--fp16-layer K --fp16-step S]

--save-reference saves each layer-level module's output of every step with torch.save, from
the script's own hooks: tests compare the probe's .bin files against them.
--nan-layer/--nan-step make one decoder layer's MLP overflow to inf at one step (NaN follows in
the next layers): a planted bug, to see how Probe Studio points at it.
--fp16-layer/--fp16-step plant a float16 overflow instead: at that step, that layer's MLP output,
scaled to at most 400 and converted to float16, is squared there (one aten::mul): 400^2 = 160000
is beyond float16's 65504, so that multiplication is where the Inf is born (`probe overflow`,
task overflow_check).
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(variance + self.eps)).to(x.dtype) * self.weight


MAX_POSITIONS = 256  # the longest sequence the rotary tables cover: prompt and decoded tokens
PROMPT_LENGTH = 12


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, max_positions=MAX_POSITIONS, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(max_positions).float(), inv_freq)
        self.register_buffer("cos", torch.cat([angles.cos(), angles.cos()], dim=-1), persistent=False)
        self.register_buffer("sin", torch.cat([angles.sin(), angles.sin()], dim=-1), persistent=False)

    def forward(self, q, k, start):
        length = q.shape[-2]
        cos = self.cos[start:start + length].to(q.dtype)
        sin = self.sin[start:start + length].to(q.dtype)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.rotary = RotaryEmbedding(self.head_dim)
        self.k_cache = None
        self.v_cache = None

    def forward(self, x):
        batch, length, hidden = x.shape
        start = 0 if self.k_cache is None else self.k_cache.shape[-2]
        q = self.q_proj(x).view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        q, k = self.rotary(q, k, start)
        if self.k_cache is not None:
            k = torch.cat([self.k_cache, k], dim=-2)
            v = torch.cat([self.v_cache, v], dim=-2)
        self.k_cache, self.v_cache = k, v
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        total = k.shape[-2]
        mask = torch.ones(length, total, dtype=torch.bool).tril(diagonal=start)
        scores = scores.masked_fill(~mask, float("-inf"))
        weights = F.softmax(scores.float(), dim=-1).to(q.dtype)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(batch, length, hidden)
        return self.o_proj(out)


class SwiGLU(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = Attention(hidden, heads)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = SwiGLU(hidden, intermediate)
        self.overflow = False  # set by the driver: this forward's MLP overflows (a planted bug)
        self.fp16_overflow = False  # ... overflows in a float16 multiplication

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        mlp_out = self.mlp(self.post_attention_layernorm(x))
        if self.overflow:
            mlp_out = mlp_out * torch.where(torch.arange(mlp_out.shape[-1]) == 0, float("inf"), 1.0)
        if self.fp16_overflow:
            half = (mlp_out * (400.0 / mlp_out.abs().max())).half()  # finite in float16: at most 400
            mlp_out = (half * half).to(mlp_out.dtype)  # 400^2 = 160000: beyond float16's 65504
        return x + mlp_out


class TinyLlama(nn.Module):
    def __init__(self, vocab=256, hidden=64, layers=4, heads=4, intermediate=172):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(DecoderLayer(hidden, heads, intermediate) for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def reset_cache(self):
        for layer in self.layers:
            layer.self_attn.k_cache = layer.self_attn.v_cache = None

    def forward(self, input_ids):
        hidden = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden = layer(hidden)
        return self.lm_head(self.norm(hidden))


def generate(model, prompt, tokens, before_step=lambda step: None):
    """Greedy decoding: one forward for the prompt, then one per new token."""
    model.reset_cache()
    ids = prompt
    logits_per_step = []
    with torch.no_grad():
        before_step(0)
        logits = model(ids)
        for step in range(1, tokens + 1):
            logits_per_step.append(logits[:, -1].float().clone())
            next_token = logits[:, -1].argmax(dim=-1, keepdim=True)
            ids = torch.cat([ids, next_token], dim=-1)
            before_step(step)
            logits = model(next_token)
    return ids, torch.stack(logits_per_step)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=8, help="tokens to decode after the prompt")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--save-logits", help="torch.save the logits of every step here")
    parser.add_argument("--save-reference", help="save every layer-level module's output per step here")
    parser.add_argument("--nan-layer", type=int, default=-1, help="make this decoder layer's MLP overflow to inf")
    parser.add_argument("--nan-step", type=int, default=2, help="... at this forward step (0 is the prompt)")
    parser.add_argument("--fp16-layer", type=int, default=-1,
                        help="make this decoder layer's MLP output overflow float16 in one multiplication")
    parser.add_argument("--fp16-step", type=int, default=2, help="... at this forward step (0 is the prompt)")
    parser.add_argument("--delay", type=float, default=0.0,
                        help="seconds to wait before each step, to watch the statistics arrive live")
    args = parser.parse_args()
    # Refused here rather than failing at token 245 with a shape error deep in attention.
    if not 0 <= args.tokens <= MAX_POSITIONS - PROMPT_LENGTH:
        parser.error("--tokens must be between 0 and %d (the model covers %d positions, %d of them "
                     "the prompt's)" % (MAX_POSITIONS - PROMPT_LENGTH, MAX_POSITIONS, PROMPT_LENGTH))

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # deterministic, and fair to compare with and without the probe
    model = TinyLlama(hidden=args.hidden, layers=args.layers).to(getattr(torch, args.dtype)).eval()
    prompt = torch.randint(0, 256, (1, PROMPT_LENGTH), generator=torch.Generator().manual_seed(args.seed + 1))

    steps = {"count": 0}
    if args.save_reference:
        os.makedirs(args.save_reference, exist_ok=True)
        # The modules the model calls directly: the probe's layer-level ops.
        layer_level = {module: name for name, module in model.named_children() if name != "layers"}
        layer_level.update({layer: "layers.%d" % i for i, layer in enumerate(model.layers)})

        def save(module, inputs, output):
            path = os.path.join(args.save_reference, "%s.%d.pt" % (layer_level[module], steps["count"]))
            torch.save(output.detach().clone(), path)

        for module in layer_level:
            module.register_forward_hook(save)

    def before_step(step):
        if args.delay > 0:
            time.sleep(args.delay)
        steps["count"] = step
        for i, layer in enumerate(model.layers):
            layer.overflow = i == args.nan_layer and step == args.nan_step
            layer.fp16_overflow = i == args.fp16_layer and step == args.fp16_step

    ids, logits = generate(model, prompt, args.tokens, before_step)
    if args.save_logits:
        torch.save(logits, args.save_logits)
    print("prompt:", prompt[0].tolist())
    print("generated:", ids[0, prompt.shape[1]:].tolist())
    print("logits checksum: %.6f" % logits.double().sum().item())


if __name__ == "__main__":
    main()
