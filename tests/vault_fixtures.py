"""Notes in the users' format, written for these tests (LF text; tests convert as needed)."""

from __future__ import annotations

from pathlib import Path

USERS_NOTE = """\
---
created: '2026-03-02'
last_reviewed: null
next_review: '2026-03-02'
review_count: 0
difficulty: medium
mastery_level: 0.0
tags:
- 归一化
- 归一化/层归一化与批归一化的区别.md
related_outlines: []
---
# 层归一化与批归一化的区别

## 面试标准答案

批归一化在批维度上统计均值方差，层归一化在特征维度上统计，因此不依赖批大小。

## 详细技术解析

```python
# 这不是标题，是代码里的注释
import torch
x = torch.randn(4, 8)
```

## 相关笔记
<!-- 自动生成 -->
"""

PLAIN_NOTE = """\
旋转位置编码 RoPE 简介
RoPE 把位置信息写进查询和键的旋转角度里。
# 代码示例（未加围栏的网页剪藏）
def rotate(x): return x
"""


SDPA_NOTE = """---
created: '2026-05-01'
last_reviewed: null
next_review: '2026-05-01'
review_count: 0
difficulty: medium
mastery_level: 0.0
drills: [sdpa]
tags: [attention]
---
# Why scale by sqrt(d_k)

## 面试标准答案
Keeps the softmax out of saturation.
"""
"""A never-reviewed note that declares the `sdpa` drill (the drill-review tests' vault)."""


def new_note(title: str, answer: str = "An answer.", *, tags: tuple[str, ...] = (),
             difficulty: str = "medium") -> str:
    """A never-reviewed note in the users' format: their block (its keys in their order), a
    title and the standard answer heading."""
    tag_lines = "".join(f"- {tag}\n" for tag in tags) if tags else ""
    return ("---\ncreated: '2026-03-02'\nlast_reviewed: null\nnext_review: '2026-03-02'\n"
            f"review_count: 0\ndifficulty: {difficulty}\nmastery_level: 0.0\n"
            + (f"tags:\n{tag_lines}" if tags else "tags: []\n")
            + f"related_outlines: []\n---\n# {title}\n\n## 面试标准答案\n\n{answer}\n")


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


def studyapp_process(tmp_path: Path, *args: str, now: str, data: str = "data"):
    """`python -m studyapp ARGS` as a user runs it, in a process of its own: the vault at
    `tmp_path/vault`, the data dir at `tmp_path/<data>`, HOME in `tmp_path`, no STUDYAPP_VAULT."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), HOME=str(tmp_path / "home"))
    env.pop("STUDYAPP_VAULT", None)
    return subprocess.run([sys.executable, "-m", "studyapp", *args, "--vault", str(tmp_path / "vault"),
                           "--data-dir", str(tmp_path / data), "--now", now],
                          env=env, cwd=root, timeout=180, capture_output=True, text=True)
