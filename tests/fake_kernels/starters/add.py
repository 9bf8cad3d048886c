"""Return the elementwise sum of two tensors of the same shape."""


def add(a, b):
    raise NotImplementedError
