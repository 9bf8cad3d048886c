"""Right code that imports a standard-library module built into the interpreter was refused after the guard went in.

`grader/guard.py` replaces `_imp.create_builtin` so that `_thread` and `_signal` cannot be made
again. But every built-in module the child has not imported yet goes through that function on
its first import too: `import tracemalloc` (a learner measuring the memory of their tiled
attention, under `if __name__ == "__main__":`) or `import faulthandler` (a debugging line) now
ends in "import error: loading a built-in module now: not allowed in drill code". The code is
right and must pass: a first import of a built-in module is no fresh copy of one already loaded.
"""

from __future__ import annotations

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

SDPA = """
    import math
    import torch
    import {module}


    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, dim=-1)) @ V


    if __name__ == "__main__":  # never run by the grader
        {module}.{start}()
"""


@pytest.mark.parametrize("module, start", [("tracemalloc", "start"), ("faulthandler", "enable")])
def test_right_code_importing_a_builtin_stdlib_module_passes(warm_grader, tmp_path, module, start):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", SDPA.format(module=module, start=start))
    assert verdict["status"] == "pass", verdict
