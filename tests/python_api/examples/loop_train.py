# msprobe documentation, "采集完整的前反向数据": the training-loop example. The documented
# lines are kept as they are (import line changed); the "模型、损失函数的定义及初始化等操作"
# placeholder is filled with a small model, a loss, an optimizer and a finite data_loader.
import sys

import torch
import torch.nn as nn

from probe_studio.pytorch import PrecisionDebugger, seed_all
# 在模型训练开始前固定随机性
seed_all()
# 请勿将PrecisionDebugger的初始化流程插入到循环代码中
debugger = PrecisionDebugger(config_path="./config.json", dump_path="./dump_path")
# 模型、损失函数的定义及初始化等操作
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
dataset = torch.utils.data.TensorDataset(torch.randn(8 * steps, 16), torch.randint(0, 4, (8 * steps,)))
data_loader = torch.utils.data.DataLoader(dataset, batch_size=8)
# 数据集迭代的位置一般为模型训练开始的位置
for data, label in data_loader:
    debugger.start()  # 开启数据dump
    # 如下是模型每个step执行的逻辑
    output = model(data)
    loss = criterion(output, label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    debugger.stop()  # 关闭数据dump
    debugger.step()  # 结束一个step的dump
print("TRAINING DONE", flush=True)
