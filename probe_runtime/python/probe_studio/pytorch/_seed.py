"""seed_all: fixes the random state of Python, NumPy and torch (msprobe compatible)."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import random

_SEED_MAX = 4294967295


def _check(seed, mode, rm_dropout):
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError("seed_all: seed must be an integer 0..%d, not %r" % (_SEED_MAX, seed))
    if not 0 <= seed <= _SEED_MAX:
        raise ValueError("seed_all: seed must be between 0 and %d, not %d" % (_SEED_MAX, seed))
    if not isinstance(mode, bool):
        raise TypeError("seed_all: mode must be True or False (deterministic algorithms), not %r" % (mode,))
    if not isinstance(rm_dropout, bool):
        raise TypeError("seed_all: rm_dropout must be True or False, not %r" % (rm_dropout,))


def _remove_dropout(torch):
    """Dropout with p=0, so that two runs compare without random masks."""
    F = torch.nn.functional
    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d"):
        original = getattr(F, name, None)
        if original is None or getattr(original, "_probe_no_dropout", False):
            continue

        def no_dropout(input, p=0.5, training=True, inplace=False, _original=original):
            return _original(input, 0.0, training, inplace)

        no_dropout._probe_no_dropout = True
        no_dropout.__name__ = name
        setattr(F, name, no_dropout)


def seed_all(seed=1234, mode=False, rm_dropout=False):
    """Seeds random, PYTHONHASHSEED, NumPy and torch (CPU and, when present, CUDA) with `seed`;
    `mode` turns torch's deterministic algorithms on (True) or off (False); `rm_dropout` makes
    torch.nn.functional's dropouts use p=0."""
    _check(seed, mode, rm_dropout)
    import torch

    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(mode)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        if mode and torch.version.cuda:
            os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    if rm_dropout:
        _remove_dropout(torch)
