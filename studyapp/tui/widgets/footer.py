"""The footer every screen shows: Textual's, rebuilt only when the keys it shows have changed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer


class KeysFooter(Footer):
    """Textual's footer rebuilds every key each time a screen's bindings may have changed, and
    one screen switch says so four or five times (the old screen suspended, the new one resumed,
    the focus moved, the screen's own refresh) for the same keys, each rebuild styling and
    laying out every key again. This one rebuilds only when the keys, their state or the
    footer's options differ from those it was built from."""

    _built_from: tuple | None = None
    """What the keys shown were built from (None before the first build)."""

    def compose(self) -> ComposeResult:
        self._built_from = self._keys_to_show()
        yield from super().compose()

    async def recompose(self) -> None:
        if not self.is_attached or self._pruning:  # its screen is closing: nothing to show
            return
        if self._keys_to_show() != self._built_from:
            await super().recompose()

    def _keys_to_show(self) -> tuple:
        active = self.screen.active_bindings
        keys = tuple((key, binding, enabled, tooltip) for key, (_, binding, enabled, tooltip) in active.items())
        return self._bindings_ready, self.compact, self.show_command_palette, keys
