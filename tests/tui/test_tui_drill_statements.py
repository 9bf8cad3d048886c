"""Every new drill's statement, as the drill screen draws it at 80×24 and 120×36: all of the
contract is there, in the task pane or by scrolling it, never cut off at the side or the end."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import tomllib
from textual.widgets import Markdown

from studyapp.tui.screens.drill import DrillScreen

from .conftest import real_app, settle

KERNELS = Path(__file__).resolve().parents[2] / "kernels"
NEW_DRILLS = ["safe_softmax", "masks_advanced", "rope", "gqa", "kv_cache_mha", "cross_attention",
              "flash_attention", "attention_backward"]
SIZES = [(80, 24), (120, 36)]


def squeezed(text: str) -> str:
    """Text with the Markdown marks and every space gone: a wrapped line (even one broken
    inside a word) reads the same as the source once both are squeezed."""
    return re.sub(r"[\s`*•]", "", text)


def source_blocks(statement: str) -> list[str]:
    """The statement's paragraphs and list items, each one block of text."""
    blocks: list[str] = []
    for chunk in re.split(r"\n\s*\n", statement):
        items = re.split(r"\n(?=\s*- )", chunk)
        blocks += [re.sub(r"^\s*- ", "", item) for item in items if item.strip()]
    return blocks


def drawn_text(markdown: Markdown) -> str:
    """Every line the statement's blocks draw, whatever part of them is scrolled into view."""
    lines = []
    for block in markdown.walk_children():
        if not block.children and block.size.area:
            lines += [strip.text for strip in block.render_lines(block.size.region)]
    return "\n".join(lines)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("drill", NEW_DRILLS)
async def test_the_whole_statement_is_drawn_and_reachable(ctx, shared_grader, drill, size):
    statement = (KERNELS / drill / "statement.md").read_text(encoding="utf-8")
    app = real_app(ctx, shared_grader)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.action_open_drill(drill)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen) and screen.drill_id == drill
        box = screen.query_one("#statement-box")
        markdown = screen.query_one("#statement", Markdown)
        assert box.display and box.content_region.width >= 10 and box.content_region.height >= 5

        drawn = squeezed(drawn_text(markdown))
        for block in source_blocks(statement):
            assert squeezed(block) in drawn, f"{drill} at {size}: not drawn whole:\n{block}"

        # Nothing wider than the pane (it has no sideways scroll), and its end can be reached.
        assert box.max_scroll_x == 0 and markdown.outer_size.width <= box.scrollable_content_region.width
        box.scroll_end(animate=False)
        await settle(pilot)
        last = [b for b in markdown.walk_children() if not b.children and b.size.area][-1]
        assert last.region.bottom <= box.content_region.bottom, f"{drill} at {size}: the end is cut off"
        assert last.region.bottom > box.content_region.y  # and it is in view


SIGNATURE = re.compile(r"\b([A-Za-z_]\w*)\(([^()`]*)\)")
"""`name(a, b=1)` in prose: a function or method named with its arguments."""


def starter_signatures(starter: Path, entry: str) -> dict[str, list[tuple[str, str | None]]]:
    """Name -> [(argument, default source or None)] of the starter's top-level functions and
    of the entry class's methods; the entry itself must be defined at the top level."""
    module = ast.parse(starter.read_text(encoding="utf-8"))
    top = {node.name: node for node in module.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert entry in top, f"{starter} does not define {entry}, the entry in drill.toml"
    functions = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if isinstance(top[entry], ast.ClassDef):
        functions += [n for n in top[entry].body if isinstance(n, ast.FunctionDef)]
    return {f.name: arguments(f.args) for f in functions}


def arguments(args: ast.arguments) -> list[tuple[str, str | None]]:
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + [ast.unparse(d) for d in args.defaults]
    return [(a.arg, d) for a, d in zip(positional, defaults)]


def named_signatures(text: str, names: set[str]):
    """(name, [(argument, default)]) for each `name(...)` in `text` naming one of `names`
    whose argument list parses as one (a call with values, like `f(Q, K, V, dO)`, does)."""
    for match in SIGNATURE.finditer(text):
        name, params = match.groups()
        if name not in names:
            continue
        try:
            tree = ast.parse(f"def {name}({params}): pass")
        except SyntaxError:
            continue
        yield name, arguments(tree.body[0].args)


@pytest.mark.parametrize("drill", NEW_DRILLS)
def test_statement_and_starter_agree_on_the_entry_and_its_arguments(drill):
    """The starter defines the entry drill.toml names; every signature the statement (and the
    starter's own docstrings) give for one of its functions lists the starter's arguments in
    the starter's order, leaving out only defaulted ones at the end, with the same defaults;
    and the statement gives each of them in full at least once."""
    meta = tomllib.loads((KERNELS / drill / "drill.toml").read_text(encoding="utf-8"))
    starter = KERNELS / drill / "starter.py"
    defined = starter_signatures(starter, meta["entry"])
    statement = (KERNELS / drill / "statement.md").read_text(encoding="utf-8")
    docstrings = "\n".join(filter(None, (ast.get_docstring(node) for node in ast.walk(
        ast.parse(starter.read_text(encoding="utf-8"))) if isinstance(
        node, (ast.Module, ast.FunctionDef, ast.ClassDef)))))
    given_in_full = set()
    for where, text in (("statement.md", statement), ("the starter's docstrings", docstrings)):
        for name, listed in named_signatures(text, set(defined)):
            expected = defined[name]
            shown = f"{name}({', '.join(a if d is None else f'{a}={d}' for a, d in listed)})"
            assert [a for a, _ in listed] == [a for a, _ in expected[:len(listed)]], (
                f"{drill}: {where} gives {shown}; the starter has {expected}")
            assert all(d is not None for _, d in expected[len(listed):]), (
                f"{drill}: {where} gives {shown}, leaving out an argument with no default")
            for (arg, default), (_, starter_default) in zip(listed, expected):
                assert default in (None, starter_default), (
                    f"{drill}: {where} gives {arg}={default}; the starter's default is {starter_default}")
            if where == "statement.md" and len(listed) == len(expected):
                given_in_full.add(name)
    entry_parts = {meta["entry"]} if meta["entry"] in defined else {"__init__", "forward"} & set(defined)
    assert entry_parts and entry_parts <= given_in_full, (
        f"{drill}: statement.md never gives the full signature of {sorted(entry_parts - given_in_full)}")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("drill", ["rope", "cross_attention"])
async def test_a_hint_asked_for_is_in_view(ctx, shared_grader, drill, size):
    """F2 shows the next hint where the learner is looking: the hints sit under a statement
    taller than the task pane, so the pane must bring the new one's first line into view."""
    from textual.geometry import Region

    app = real_app(ctx, shared_grader)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.action_open_drill(drill)
        await settle(pilot)
        screen = app.screen
        hints = screen.query_one("#drill-hints")
        box = screen.query_one("#statement-box")
        for number in (1, 2):
            await pilot.press("f2")
            await settle(pilot)
            visible = box.content_region.intersection(hints.region)
            assert visible.height >= 1, f"hint {number} is out of view at {size}"
            in_view = [strip.text.strip() for strip in hints.render_lines(
                Region(0, visible.y - hints.region.y, hints.size.width, visible.height))]
            assert any(line.startswith(f"Hint {number}/") for line in in_view), (number, in_view)


async def test_after_giving_up_the_status_line_offers_no_hint_or_give_up(ctx, shared_grader):
    """Once the try is over, F2 and F3 do nothing: the line under the editor stops offering them."""
    from textual.widgets import Static

    app = real_app(ctx, shared_grader)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.action_open_drill("rope")
        await settle(pilot)
        screen = app.screen
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert screen.proposal is not None
        status = str(screen.query_one("#grade-status", Static).render())
        assert "F2" not in status and "F3" not in status, status
