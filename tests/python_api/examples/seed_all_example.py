# msprobe documentation, "seed_all" 调用示例, verbatim except the import line.
import torch
from probe_studio.pytorch import seed_all

# seed_all仅固定随机种子和开启确定性计算。
seed_all(seed=1234, mode=True)
num1 = torch.mean(torch.randn(2,2))
print(num1)  # tensor(-0.0866)
num2 = torch.mean(torch.randn(2,2))
print(num2)  # tensor(0.2038)
