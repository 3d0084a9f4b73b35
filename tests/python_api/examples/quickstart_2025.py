# msprobe documentation, "快速上手" (Ascend/mstt docs/zh/dump/pytorch_data_dump_instruct.md, 2025),
# verbatim except the import line (msprobe.pytorch -> probe_studio.pytorch).
# 根据需要import包
import torch
import torch.nn as nn
import torch.nn.functional as F

# 导入工具的数据采集接口
from probe_studio.pytorch import PrecisionDebugger, seed_all

# 在模型训练开始前固定随机性
seed_all()

# 在模型训练开始前实例化PrecisionDebugger
debugger = PrecisionDebugger()

# 定义网络
class ModuleOP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear_1 = nn.Linear(in_features=8, out_features=4)
        self.linear_2 = nn.Linear(in_features=4, out_features=2)

    def forward(self, x):
        x1 = self.linear_1(x)
        x2 = self.linear_2(x1)
        r1 = F.relu(x2)
        return r1

if __name__ == "__main__":
    module = ModuleOP()
    
    # 开启数据 dump
    debugger.start(model=module)
    x = torch.randn(10, 8)
    out = module(x)
    loss = out.sum()
    loss.backward()

    # 关闭数据 dump
    debugger.stop()
