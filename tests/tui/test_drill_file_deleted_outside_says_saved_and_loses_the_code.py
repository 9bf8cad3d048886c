"""The drill's workspace file is deleted outside the app (`rm`, a `git clean`, a sync tool) while
the drill is open and its code, saved a moment ago, is in the editor. The app says nothing;
ctrl+s then says "sdpa.py is saved." and writes nothing (the editor's text equals what was
last saved, so there is "nothing to save"); ctrl+r ("save and grade") grades a file that is
not there ("cannot read the file: No such file or directory"); and leaving (Esc, which saves)
writes nothing either, so the code on the screen is gone. Found in tmux with a 6,000-line
paste: `ls workspace/` after Esc held no sdpa.py."""

from __future__ import annotations

from textual.widgets import TextArea

from .conftest import app_with_grader, settle
from .test_tui_drills import StubGrader, open_sdpa

CODE = "def scaled_dot_product_attention(Q, K, V, mask=None):\n    return V  # 我的代码\n"


async def test_a_deleted_drill_file_is_written_again_by_ctrl_s_and_by_leaving(ctx):
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(120, 40)) as pilot:
        drill = await open_sdpa(pilot)
        drill.query_one("#code", TextArea).load_text(CODE)
        await pilot.press("ctrl+s")
        await settle(pilot)
        path = drill.path
        assert path.read_text(encoding="utf-8") == CODE

        path.unlink()  # deleted in another shell
        await pilot.pause(1.5)  # the app's watch of the file has looked at it
        await settle(pilot)
        app._notifications.clear()
        await pilot.press("ctrl+s")
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert path.exists() and path.read_text(encoding="utf-8") == CODE, f"ctrl+s wrote nothing, and said {said}"

        path.unlink(missing_ok=True)
        await pilot.pause(1.5)
        await settle(pilot)
        await pilot.press("escape")  # leaving saves
        await settle(pilot)
        assert path.exists() and path.read_text(encoding="utf-8") == CODE, "leaving lost the code"
