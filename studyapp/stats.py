"""Every number the front ends show about progress, one definition each: the heatmap, the
forecast, true retention (by window and by week), the streak, mastery by tag and the drill
history. `studyapp stats` prints them, the TUI's Today and Stats screens draw them."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the app's first frame draws the calendar below before any card is loaded
    from fsrs import Scheduler

    from studyapp.store import ReviewRow, Store

PairAhead = Callable[[list], None]
"""Given the notes whose drills mastery will ask for, before it asks (`Vault.pair_ahead`)."""

RETENTION_WINDOWS = (7, 30, 365)
FORECAST_DAYS = 30
HEATMAP_DAYS = 365


@dataclass
class Retention:
    """Anki's true retention over a window: of the reviews of cards that were in the Review
    state (learning steps excluded), the share not rated "again"."""

    days: int
    reviews: int
    passed: int
    retention: float | None
    """None when there was no such review in the window."""


@dataclass
class Stats:
    """Statistics as of a moment. Reviews after it (a frozen clock set in the past) count
    nowhere: they have not happened yet. The forecast, the counts by state and mastery come
    from the cards as the whole log leaves them, seen from that moment: rebuilding every card
    as of a past instant is a replay on each call, for a clock only tests and planning set
    back (`rate` refuses to go back in time, `optimize` too)."""

    today: date
    total_reviews: int
    reviews_per_day: dict[str, int]
    """Local ISO date -> reviews that day, last 365 days, only days with reviews (heatmap)."""
    forecast: list[tuple[str, int]]
    """(local ISO date, notes due) for the next 30 days; today includes everything overdue."""
    retention: list[Retention]
    streak: int
    """Consecutive days with at least one review, ending today (or yesterday while today has
    none yet: a streak breaks only when a whole day passes without reviews)."""
    mastery_by_tag: dict[str, dict[str, float]]
    """tag -> {"notes": count, "mastery": mean mastery now}."""
    counts_by_state: dict[str, int] = field(default_factory=dict)
    """new / learning / review / relearning / suspended (suspended notes counted only there)."""

    def to_dict(self) -> dict:
        data = asdict(self)
        data["today"] = self.today.isoformat()
        data["forecast"] = [{"date": d, "due": n} for d, n in self.forecast]
        return data


def local_day(moment: datetime, utc_offset: int | None = None) -> date:
    """The day of `moment` on this machine's calendar, or, given the UTC offset a review
    recorded, on its reviewer's: the day the note's `last_reviewed` says, the same on every
    device and after a move to another zone."""
    if utc_offset is None:
        return moment.astimezone().date()
    return (moment.astimezone(timezone.utc) + timedelta(seconds=utc_offset)).date()


def review_day(review: ReviewRow) -> date:
    """The reviewer's day of a review (`local_day`)."""
    return local_day(review.reviewed_at, review.utc_offset)


def recent_reviews(store: Store, now: datetime) -> list[ReviewRow]:
    """The review rows the statistics look at: the last year's (the heatmap's span) up to
    `now`; under a frozen clock set in the past, later ones have not happened yet."""
    return store.reviews(since=now - timedelta(days=HEATMAP_DAYS + 1), until=now)


def reviews_per_day(reviews) -> Counter:
    """Local day -> number of reviews that day."""
    return Counter(review_day(r) for r in reviews)


def streak_ending(per_day: Counter, today: date) -> int:
    """Consecutive days with reviews ending today, or yesterday while today has none yet."""
    streak, day = 0, today if per_day.get(today) else today - timedelta(days=1)
    while per_day.get(day):
        streak += 1
        day -= timedelta(days=1)
    return streak


def streak_as_of(store: Store, per_day: Counter, now: datetime) -> int:
    """`streak_ending` over the whole log, given `per_day` of `recent_reviews`: a streak that
    reaches back to that year's first day asks the database for the year before it, and so on,
    so only a streak that long reads more than the year every stats call reads anyway."""
    today = local_day(now)
    days = Counter(per_day)
    since = now - timedelta(days=HEATMAP_DAYS + 1)
    while True:
        streak = streak_ending(days, today)
        end = today if days.get(today) else today - timedelta(days=1)
        gap = end - timedelta(days=streak)  # the day without reviews that ended the streak
        # local_day(since) holds only the reviews from `since` on: a gap there may be none
        if streak == 0 or gap > local_day(since):
            return streak
        earlier = since - timedelta(days=HEATMAP_DAYS + 1)
        times = store.review_moments(since=earlier, until=since)
        if not times:
            return streak
        days.update(local_day(at, offset) for at, offset in times)
        since = earlier


def compute_stats(store: Store, scheduler: Scheduler, note_cards: Sequence, now: datetime,
                  pair_ahead: PairAhead | None = None) -> Stats:
    """Statistics as of `now`. `note_cards` are `cards.NoteCard`s: every live note with its
    stored or derived card (the vault says which notes exist, the database what happened)."""
    from fsrs import Rating, State

    today = local_day(now)
    reviews = recent_reviews(store, now)

    per_day = reviews_per_day(reviews)
    heatmap = heatmap_of(per_day, today)

    retention = []
    for days in RETENTION_WINDOWS:
        start = today - timedelta(days=days - 1)
        graded = [r for r in reviews if r.state_before == State.Review
                  and review_day(r) >= start]
        passed = sum(1 for r in graded if r.rating != Rating.Again)
        retention.append(Retention(days, len(graded), passed,
                                   passed / len(graded) if graded else None))

    streak = streak_as_of(store, per_day, now)

    forecast: Counter[int] = Counter()
    counts = Counter({"new": 0, "learning": 0, "review": 0, "relearning": 0, "suspended": 0})
    for item in note_cards:
        card = item.card
        if card.suspended:
            counts["suspended"] += 1
            continue
        if item.is_new:
            counts["new"] += 1
            continue
        counts[State(card.state).name.lower()] += 1
        offset = (max(local_day(card.due), today) - today).days
        if offset < FORECAST_DAYS:
            forecast[offset] += 1

    return Stats(
        today=today,
        total_reviews=store.review_count(until=now),
        reviews_per_day=heatmap,
        forecast=[((today + timedelta(days=i)).isoformat(), forecast[i])
                  for i in range(FORECAST_DAYS)],
        retention=retention,
        streak=streak,
        mastery_by_tag=mastery_by_tag(note_cards, now, scheduler, store.drill_status(), pair_ahead=pair_ahead),
        counts_by_state=dict(counts),
    )


def heatmap_of(per_day: Counter, today: date) -> dict[str, int]:
    """Local ISO day -> reviews, for the heatmap's span (days with reviews only)."""
    return {d.isoformat(): n for d, n in sorted(per_day.items()) if today - d < timedelta(days=HEATMAP_DAYS)}


def mastery_by_tag(note_cards: Sequence, now: datetime, scheduler: Scheduler, drill_status,
                   only: set[str] | None = None, pair_ahead: PairAhead | None = None) -> dict[str, dict[str, float]]:
    """tag -> {"notes": count, "mastery": mean mastery now}, for every tag or those in `only`
    (a note's mastery may need its drills, worked out from its text: notes in no wanted tag
    are never asked). `pair_ahead` is first given the notes whose drills will be asked
    (`Vault.pair_ahead` pairs many at once on every core)."""
    from studyapp.mastery import asks_for_drills, note_mastery

    wanted = [(item, tags) for item in note_cards
              if (tags := item.note.tags if only is None else [tag for tag in item.note.tags if tag in only])]
    if pair_ahead is not None:
        pair_ahead([item.note for item, _tags in wanted if not item.is_new and asks_for_drills(item.card)])
    by_tag: dict[str, list[float]] = defaultdict(list)
    for item, tags in wanted:
        value = 0.0 if item.is_new else note_mastery(item.note, item.card, now, scheduler, drill_status)
        for tag in tags:
            by_tag[tag].append(value)
    return {tag: {"notes": len(v), "mastery": round(sum(v) / len(v), 3)} for tag, v in sorted(by_tag.items())}


def top_topics_mastery(note_cards: Sequence, now: datetime, scheduler: Scheduler, drill_status,
                       rows: int, pair_ahead: PairAhead | None = None) -> list[tuple[str, float]]:
    """`top_topics(mastery_by_tag(...), rows)`, computing mastery only for the notes of those
    topics: which topics have the most notes is known without any note's mastery."""
    top = ranked_topics(Counter(tag for item in note_cards for tag in item.note.tags), rows)
    by_tag = mastery_by_tag(note_cards, now, scheduler, drill_status, only=set(top), pair_ahead=pair_ahead)
    return [(tag, float(by_tag[tag]["mastery"])) for tag in top]


def reviewed_today_and_streak(store: Store, now: datetime) -> tuple[int, int]:
    """Today's review count and the streak, without the rest (Today's figures come first)."""
    per_day = reviews_per_day(recent_reviews(store, now))
    return per_day.get(local_day(now), 0), streak_as_of(store, per_day, now)


def weekly_retention(store: Store, now: datetime, weeks: int = 26) -> list[tuple[date, float]]:
    """True retention per week (Monday-dated) over the last `weeks`, weeks with reviews only
    (none after `now`: under a frozen clock in the past they have not happened yet)."""
    from fsrs import Rating, State

    by_week: dict[date, list[int]] = defaultdict(lambda: [0, 0])
    for row in store.reviews(since=now - timedelta(weeks=weeks), until=now):
        if row.state_before != State.Review:
            continue
        day = review_day(row)
        monday = day - timedelta(days=day.weekday())
        by_week[monday][0] += 1
        by_week[monday][1] += row.rating != Rating.Again
    return [(week, passed / total) for week, (total, passed) in sorted(by_week.items())]


def drill_history(store: Store, days: int = 14) -> list[tuple[date, int, int]]:
    """(local day, passed, not passed) graded attempts, for the last `days` days with attempts."""
    by_day: dict[date, list[int]] = defaultdict(lambda: [0, 0])
    for row in store.drill_attempts():
        day = local_day(row.attempted_at)
        by_day[day][0 if row.verdict == "pass" else 1] += 1
    return [(day, passed, failed) for day, (passed, failed) in sorted(by_day.items())][-days:]


def is_topic(tag: str) -> bool:
    """The users' previous tool adds the note's own path as a tag; that is not a topic."""
    return not tag.lower().endswith((".md", ".markdown", ".txt"))


def ranked_topics(notes_by_tag: Mapping[str, float], rows: int) -> list[str]:
    """The `rows` topics with the most notes, most first, then by name (paths left out)."""
    return sorted((tag for tag in notes_by_tag if is_topic(tag)),
                  key=lambda tag: (-notes_by_tag[tag], tag))[:rows]


def top_topics(mastery_by_tag: dict[str, dict[str, float]], rows: int) -> list[tuple[str, float]]:
    """The `rows` topics with the most notes, with their mean mastery (paths left out)."""
    top = ranked_topics({tag: info["notes"] for tag, info in mastery_by_tag.items()}, rows)
    return [(tag, float(mastery_by_tag[tag]["mastery"])) for tag in top]


DAY_LABELS = ("Mon", "", "Wed", "", "Fri", "", "Sun")
MAX_WEEKS = 53
"""A year: the statistics keep 365 days of reviews per day."""
TEXT_SHADES = "·░▒▓█"
"""The calendar's levels in plain text: no reviews, then four shades (`level`)."""


def level(count: int, busiest: int) -> int:
    """A day's shade on the review calendar: 0 for no reviews, else 1..4 by quartile of the
    busiest day, which is always the darkest (the app's heatmap and the command's text calendar
    alike; a busiest day of 1 to 3 reviews was drawn in a lighter shade)."""
    if count <= 0 or busiest <= 0:
        return 0
    return min(4, -(-4 * count // busiest))


@dataclass(frozen=True)
class Calendar:
    """The review calendar laid out, as the app's heatmap and `stats`' text one draw it: weeks
    left to right (as many as the width holds, at most a year), Monday on top, the newest week
    at the right."""

    weeks: int
    months: str
    """The month row: each month's name over its first week, two cells a week."""
    levels: tuple[tuple[int | None, ...], ...]
    """Per weekday, Monday first, per week: the day's `level`; None for a day still to come."""
    total: int
    """The reviews on the days drawn."""


def review_calendar(counts: Mapping[date, int], end: date, width: int) -> Calendar:
    """The calendar of `counts` (reviews per local day) up to `end`, for `width` columns."""
    weeks = max(1, min(MAX_WEEKS, (width - 4) // 2))
    first_monday = end - timedelta(days=end.weekday(), weeks=weeks - 1)
    busiest = max(counts.values(), default=0)
    months = [" "] * (weeks * 2)
    for week in range(weeks):
        monday = first_monday + timedelta(weeks=week)
        if monday.day <= 7 and week * 2 + 3 <= len(months):
            months[week * 2:week * 2 + 3] = monday.strftime("%b")
    levels = tuple(tuple(None if day > end else level(counts.get(day, 0), busiest)
                         for day in (first_monday + timedelta(weeks=week, days=weekday) for week in range(weeks)))
                   for weekday in range(7))
    total = sum(n for day, n in counts.items() if first_monday <= day <= end)
    return Calendar(weeks, "".join(months), levels, total)


def text_heatmap(per_day: Mapping[str, int], today: date, width: int = 80) -> list[str]:
    """The review calendar (`review_calendar`) as lines of text; days still to come are blank."""
    calendar = review_calendar({date.fromisoformat(day): n for day, n in per_day.items()}, today, width)
    lines = ["    " + calendar.months.rstrip()]
    for weekday, row in enumerate(calendar.levels):
        cells = "".join((" " if shade is None else TEXT_SHADES[shade]) + " " for shade in row)
        lines.append(f"{DAY_LABELS[weekday]:<4}{cells}".rstrip())
    weeks, total = calendar.weeks, calendar.total
    lines.append(f"    {total} review{'s' if total != 1 else ''} in {weeks} week{'s' if weeks != 1 else ''} "
                 f"(less {' '.join(TEXT_SHADES)} more)")
    return lines


def format_stats(stats: Stats, width: int = 80) -> str:
    """Terminal text for `studyapp stats` (the calendar as wide as `width` allows)."""
    lines = [f"Reviews: {stats.total_reviews} in total, "
             f"{stats.reviews_per_day.get(stats.today.isoformat(), 0)} today; "
             f"streak {stats.streak} day{'s' if stats.streak != 1 else ''}"]
    counts = stats.counts_by_state
    lines.append("Notes: " + ", ".join(f"{n} {state}" for state, n in counts.items()))
    lines.append("True retention: " + ", ".join(
        f"{r.days}d {r.retention:.1%} ({r.passed}/{r.reviews})" if r.retention is not None
        else f"{r.days}d -" for r in stats.retention))
    week = stats.forecast[:7]
    lines.append("Due next 7 days: " + "  ".join(f"{d[5:]}:{n}" for d, n in week))
    lines.append(f"Due next 30 days: {sum(n for _, n in stats.forecast)}")
    lines.append("Reviews per day:")
    lines.extend(text_heatmap(stats.reviews_per_day, stats.today, width))
    topics = {tag: info for tag, info in stats.mastery_by_tag.items() if is_topic(tag)}
    if topics:  # as the app: an imported note's own path, one of its tags, is no topic
        lines.append("Mastery by tag:")
        from studyapp.textwidth import display_width, fit, shown

        width = max(display_width(shown(t)) for t in topics)
        for tag, info in topics.items():
            bar = "#" * round(info["mastery"] * 20)
            notes = int(info["notes"])
            lines.append(f"  {fit(shown(tag), width)}  {info['mastery']:.2f} {bar:<20} "
                         f"({notes} note{'s' if notes != 1 else ''})")
    return "\n".join(lines)
