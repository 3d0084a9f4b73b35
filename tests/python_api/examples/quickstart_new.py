# msprobe documentation, "快速入门" (Ascend/msprobe docs/zh/dump/pytorch_data_dump_instruct.md),
# verbatim except the import line (msprobe.pytorch -> probe_studio.pytorch).
import torch
import torch.nn as nn
import torch.nn.functional as F

# 导入工具的数据采集接口
from probe_studio.pytorch import PrecisionDebugger, seed_all

# 在模型训练开始前固定随机性
seed_all()
# 在模型训练开始前实例化PrecisionDebugger
debugger = PrecisionDebugger(config_path="./config.json")

# 定义网络
class ModuleOP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features=8, out_features=4)

    def forward(self, x):
        x1 = self.linear(x)
        r1 = F.relu(x1)
        return r1

if __name__ == "__main__":
    model = ModuleOP()

    debugger.start(model=model)  # 开启数据dump

    x = torch.randn(10, 8)
    out = model(x)
    loss = out.sum()
    loss.backward()

    debugger.stop()  # 关闭数据dump，可继续开启数据dump，采集数据会记录在同一个step中
    debugger.step()  # 结束数据dump，若继续开启数据dump，采集数据将记录在下一个step中
