"""Builds the lower triangle with numpy and hands it over with torch.from_numpy, which always
makes a CPU tensor: the statement asks for the mask on the default device, and with one set
(torch.set_default_device("cuda"), as a GPU training script does) this mask stays on the CPU,
so masked_fill on the GPU scores raises."""
import numpy as np
import torch


def causal_mask(n):
    return torch.from_numpy(np.tril(np.ones((n, n), dtype=bool)))
