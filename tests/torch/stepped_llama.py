"""The demo decoder, pausing at agreed points so a test can replace the config in between:
before each forward step N it writes <dir>/ready_N and waits for <dir>/go_N; at step 4 it also
pauses inside layers.2 (mid_4 / go_mid_4), after that layer op has begun."""
# SPDX-License-Identifier: GPL-3.0-or-later
import importlib.util
import os
import sys
import time

import torch

demo_dir, sync_dir, tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = importlib.util.spec_from_file_location("llama_demo", os.path.join(demo_dir, "llama_demo.py"))
llama = importlib.util.module_from_spec(spec)
spec.loader.exec_module(llama)


def handshake(name):
    open(os.path.join(sync_dir, "ready_" + name), "w").close()
    deadline = time.time() + 60
    while not os.path.exists(os.path.join(sync_dir, "go_" + name)):
        if time.time() > deadline:
            sys.exit("no go_%s within 60 s" % name)
        time.sleep(0.005)


torch.manual_seed(1234)
model = llama.TinyLlama().eval()
prompt = torch.randint(0, 256, (1, 12), generator=torch.Generator().manual_seed(1235))
current = {"step": -1}


def before_step(step):
    current["step"] = step
    handshake(str(step))


def pause_inside(module, args):
    if current["step"] == 4:
        handshake("mid_4")


model.layers[2].register_forward_pre_hook(pause_inside)
llama.generate(model, prompt, tokens, before_step)
print("done")
