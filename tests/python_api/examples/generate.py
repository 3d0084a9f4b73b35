# A generate-style run shaped like msprobe's inference example ("推理模型采集指定token_range"):
#     debugger = PrecisionDebugger(config_path="./config.json", dump_path="./dump_path")
#     debugger.start(model=model, token_range=[1,3])
#     output = llm.generate(prompts, ...)
#     debugger.stop(); debugger.step()
# vLLM is not available here, so the model is a tiny causal language model with a greedy
# generate loop (one forward call of the model per generated token).
import torch
import torch.nn as nn
import torch.nn.functional as F

from probe_studio.pytorch import PrecisionDebugger, seed_all
# 在模型训练开始前固定随机性
seed_all()
# 请勿将PrecisionDebugger的初始化流程插入到循环代码中
debugger = PrecisionDebugger(config_path="./config.json", dump_path="./dump_path")


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        h = self.norm(x)
        n = x.shape[1]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a
        return x + self.mlp(x)


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=16, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(layers)])
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


@torch.no_grad()
def generate(model, prompt, max_new_tokens):
    tokens = prompt
    for _ in range(max_new_tokens):
        logits = model(tokens)
        next_token = torch.argmax(F.softmax(logits[:, -1, :], dim=-1), dim=-1, keepdim=True)
        tokens = torch.cat([tokens, next_token], dim=1)
    return tokens


model = TinyLM().eval()
prompts = torch.tensor([[1, 2, 3, 4]])
# 开启数据dump, 指定采集推理模型逐字符循环推理中的第1~3次
debugger.start(model=model, token_range=[1,3])
# 推理模型生成的逻辑
output = generate(model, prompts, max_new_tokens=6)
# 关闭数据dump并落盘
debugger.stop()
debugger.step()
print("GENERATED", output.tolist(), flush=True)
