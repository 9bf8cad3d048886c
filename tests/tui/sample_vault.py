"""A small vault in the users' format (own words), written fresh for each test."""

from __future__ import annotations

from pathlib import Path

NOTES = {
    "注意力/缩放因子.md": """---
created: '2026-11-01'
last_reviewed: '2026-11-10'
next_review: '2026-11-20'
review_count: 3
difficulty: medium
mastery_level: 0.3
tags:
- 注意力
- 注意力/缩放因子.md
related_outlines: []
source: 自己整理
drills:
- sdpa
---
# 为什么注意力分数要除以根号 d_k?

## 面试标准答案
点积的方差随 d_k 线性增长, 不缩放会让 softmax 进入饱和区, 梯度几乎为零。

## 详细技术解析
```python
scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
```
""",
    "注意力/多头.md": """---
created: '2026-11-15'
last_reviewed: null
next_review: '2026-11-15'
review_count: 0
difficulty: hard
mastery_level: 0.0
tags:
- 注意力
related_outlines: []
---
# 多头注意力相比单头有什么好处?

## 面试标准答案
每个头在不同的子空间里学习不同的关系, 拼接后再投影回模型维度。
""",
    "基础/层归一化.md": """---
created: '2026-11-20'
last_reviewed: null
next_review: null
review_count: 0
difficulty: easy
mastery_level: 0.0
tags:
- 基础
related_outlines: []
---
# LayerNorm 对哪个维度做归一化?

## 面试标准答案
对每个 token 的特征维度做归一化, 与 batch 大小无关。
""",
}

NOTES["基础/cls.md"] = """# [CLS] 向量代表什么?

## 答案
句子级别的汇总表示, 常用于分类头。
"""

BROKEN = {"基础/坏掉的.md": "---\ntags: [unclosed\n---\n# 坏\n"}


def write_vault(root: Path, broken: bool = True) -> Path:
    for rel, text in {**NOTES, **(BROKEN if broken else {})}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
