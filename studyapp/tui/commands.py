"""Command palette providers: every binding of the current screen, plus app-wide destinations."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

APP_WIDE = ("start_review", "switch_mode", "quit", "command_palette")
"""Actions `StudyCommandsProvider` (or Textual's own commands) offers everywhere: a screen
binding to one of them would list the command twice."""


def _run_action(app, action: str, node) -> None:
    app.call_later(app.run_action, action, node)


def _is_app_wide(action: str) -> bool:
    name = action.removeprefix("app.").split("(", 1)[0]
    return name in APP_WIDE


class _ListedCommands(Provider):
    """A provider whose commands are a plain list of (name, callback, help) from `_commands`."""

    def _commands(self):
        raise NotImplementedError

    async def discover(self) -> Hits:
        for name, callback, help_text in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self._commands():
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)


class ScreenActionsProvider(_ListedCommands):
    """Offers each binding of the screen the palette was opened from, so no action is key-only."""

    def _commands(self):
        seen: set[str] = set()
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if not binding.description or not active.enabled or binding.action in seen:
                continue
            if _is_app_wide(binding.action):
                continue
            seen.add(binding.action)
            key = binding.key_display or binding.key
            yield (
                binding.description,
                partial(_run_action, self.app, binding.action, active.node),
                f"key: {key}",
            )


class StudyCommandsProvider(_ListedCommands):
    """Destinations and session actions reachable from any screen."""

    def _commands(self):
        app = self.app
        yield ("Start review", partial(_run_action, app, "start_review", app), "review what is due now")
        for mode, title in (("today", "Today"), ("drills", "Drills"), ("notes", "Notes"), ("stats", "Stats")):
            yield (f"Go to {title}", partial(_run_action, app, f"switch_mode({mode!r})", app),
                   f"open the {title} screen")
        study = getattr(app, "study", None)
        if getattr(app, "study_ready", False) and study is not None:
            try:
                drills = study.drills()
            except Exception:  # noqa: BLE001 - the palette must open even if the catalog is broken
                drills = []
            for drill in drills:
                yield (
                    f"Open drill: {drill.title}",
                    partial(_run_action, app, f"open_drill({drill.id!r})", app),
                    drill.status,
                )
