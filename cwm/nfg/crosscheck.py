"""Cross-checking a record's stored formal game against the game its own text states (``cwm nfg audit --transcribe``).

``read_text`` writes the game from the item text alone, never from the stored ``nfg`` object: it reads the
outcome lines (``prompts/nfg/parts/outcome.md``), their amounts (``parts/points.md``, ``point.md``,
``dollars.md``) and who "you" are (the ``{{me}}`` sentence of ``prompts/nfg/settings/``). Its patterns are
built from those templates, so it reads exactly what ``cwm.nfg.render`` writes; a text in any other form is
``Unreadable`` (the caller may then ask the LLM transcriber). ``differences`` compares two games by name:
the players, each player's actions, the unit, who "you" are and every payoff, equal up to what the text
determines (action and player order do not matter; a fractional payoff is written to six significant digits,
so ``1/3`` and ``0.333333`` agree).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction

import prompts
from cwm.nfg.game import MatrixGame, NfgFormatError

SETTINGS = ("colours", "numbers", "projects")
MAX_LINE = 300  # longer lines are never outcome lines (cwm writes at most ~130 characters): bounds the work
MAX_TEXT = 100_000  # of matching a hostile text, with MAX_LINE, to well under a second
_NAME = r"[^\n]+?"
_NUMBER = r"\d+(?:\.\d+)?(?:e[+-]?\d+)?"
_MAX_LISTED = 4  # payoff differences named in full; the rest are counted


class Unreadable(ValueError):
    """The text does not state a complete game in cwm's task format; the message says what is missing."""


@dataclasses.dataclass(frozen=True)
class Written:
    """The game a text states.

    Attributes:
      game: players, actions (in the order the text first names them), payoffs and unit.
      me: which player "you" is, or None when the text does not say it in a form the reader knows.
    """

    game: MatrixGame
    me: int | None


def pattern(template: str, groups: Mapping[str, str]) -> str:
    """A regular expression for a prompt template: its literal text escaped, each ``{{field}}`` a named group
    (``groups[field]``, else any text on one line), a repeated field a back-reference to its first value."""
    out: list[str] = []
    seen: set[str] = set()
    for k, piece in enumerate(re.split(r"\{\{(\w+)\}\}", template.strip())):
        if k % 2 == 0:
            out.append(re.escape(piece))
        elif piece in seen:
            out.append(f"(?P={piece})")
        else:
            seen.add(piece)
            out.append(f"(?P<{piece}>{groups.get(piece, _NAME)})")
    return "".join(out)


@functools.cache
def _outcome() -> re.Pattern[str]:
    return re.compile(pattern(prompts.template("nfg/parts/outcome.md"), {}))


@functools.cache
def _amounts() -> tuple[tuple[str, re.Pattern[str]], ...]:
    fields = {"sign": "-?", "magnitude": _NUMBER}
    return tuple((unit, re.compile(pattern(prompts.template(f"nfg/parts/{name}.md"), fields)))
                 for unit, name in (("points", "points"), ("points", "point"), ("dollars", "dollars")))


def read_amount(text: str) -> tuple[Fraction, str]:
    """An amount as ``cwm.nfg.phrases.amount`` writes it (``3 points``, ``-1 point``, ``-$2.5``) and its unit.

    Raises:
      Unreadable: the text is no amount.
    """
    for unit, regex in _amounts():
        m = regex.fullmatch(text.strip())
        if m is not None:
            value = Fraction(m.group("magnitude"))
            return (-value if m.group("sign") else value), unit
    raise Unreadable(f"{text!r} is not an amount in points or dollars")


def read_text(text: str) -> Written:
    """The game an item text states, from its outcome lines alone (never from a stored game).

    Raises:
      Unreadable: no outcome lines, lines naming more than two players, an action pair stated twice or not
        at all, an unreadable amount, or points mixed with dollars (the message says which).
    """
    if len(text) > MAX_TEXT:
        raise Unreadable(f"the text has {len(text)} characters, more than the {MAX_TEXT} a task text may have")
    rows = [m for line in text.splitlines() if len(line) <= MAX_LINE
            for m in [_outcome().fullmatch(line.strip())] if m is not None]
    if not rows:
        raise Unreadable("the text has no outcome lines in cwm's task format "
                         "('- If A picks X and B picks Y: A gets ... and B gets ...')")
    players = {(m.group("player_a"), m.group("player_b")) for m in rows}
    if len(players) != 1 or len({p.lower() for p in next(iter(players))}) != 2:
        raise Unreadable(f"the outcome lines name players {sorted(players)}, not one pair of two players")
    table: dict[tuple[str, str], tuple[Fraction, Fraction]] = {}
    units: set[str] = set()
    for m in rows:
        pair = (m.group("action_a"), m.group("action_b"))
        (u0, unit0), (u1, unit1) = read_amount(m.group("payoff_a")), read_amount(m.group("payoff_b"))
        if pair in table:
            raise Unreadable(f"the text states the outcome of {pair[0]!r} against {pair[1]!r} twice")
        table[pair] = (u0, u1)
        units |= {unit0, unit1}
    if len(units) != 1:
        raise Unreadable("the text mixes points and dollars")
    return Written(_table_game(next(iter(players)), table, units.pop()), _me(text, next(iter(players))))


def _table_game(players: tuple[str, str], table: Mapping[tuple[str, str], tuple[Fraction, Fraction]],
                unit: str) -> MatrixGame:
    rows, cols = (tuple(dict.fromkeys(pair[k] for pair in table)) for k in (0, 1))
    missing = [f"{a!r} against {b!r}" for a in rows for b in cols if (a, b) not in table]
    if missing:
        raise Unreadable(f"the text states no outcome for {', '.join(missing[:3])}"
                         f"{f' (and {len(missing) - 3} more)' if len(missing) > 3 else ''}")
    try:
        return MatrixGame(players, (rows, cols), tuple(tuple(table[(a, b)] for b in cols) for a in rows), unit)
    except NfgFormatError as e:
        raise Unreadable(f"the stated outcomes are no game: {e}") from e


@functools.cache
def _me_lead_ins() -> tuple[str, ...]:
    """The words before ``{{me}}`` in each setting (``You are``, ``You run``)."""
    found = []
    for style in SETTINGS:
        before = prompts.template(f"nfg/settings/{style}.md").partition("{{me}}")[0]
        found.append(re.split(r"(?<=[.;])\s+", before)[-1].strip())
    return tuple(dict.fromkeys(found))


def _me(text: str, players: tuple[str, str]) -> int | None:
    said = {k for k, name in enumerate(players) for lead in _me_lead_ins()
            if re.search(re.escape(lead) + r"\s+" + re.escape(name) + r"(?![\w-])", text)}
    return said.pop() if len(said) == 1 else None


def differences(stored: MatrixGame, stored_me: int, written: Written) -> list[str]:
    """What differs between a stored game and the game a text states, one phrase each (empty when they agree).

    Players and actions are matched by name, so a table stored in another order is the same game.
    """
    if {p.lower() for p in stored.players} != {p.lower() for p in written.game.players}:
        return [f"players: stored {list(stored.players)}, text {list(written.game.players)}"]
    found: list[str] = []
    if stored.unit != written.game.unit:
        found.append(f"unit: stored {stored.unit}, text {written.game.unit}")
    if written.me is not None and stored.players[stored_me].lower() != written.game.players[written.me].lower():
        found.append(f"'you': stored {stored.players[stored_me]}, text {written.game.players[written.me]}")
    text_player = {p.lower(): k for k, p in enumerate(written.game.players)}
    actions = [f"{name}'s actions: stored {list(stored.actions[k])}, text {list(theirs)}"
               for k, name in enumerate(stored.players)
               for theirs in [written.game.actions[text_player[name.lower()]]]
               if {a.lower() for a in stored.actions[k]} != {a.lower() for a in theirs}]
    return found + (actions or _payoff_differences(stored, written.game))  # payoffs only over the same actions


def _payoff_differences(stored: MatrixGame, text: MatrixGame) -> list[str]:
    flip = stored.players[0].lower() != text.players[0].lower()
    rows = {a.lower(): i for i, a in enumerate(text.actions[1 if flip else 0])}
    cols = {a.lower(): j for j, a in enumerate(text.actions[0 if flip else 1])}
    found = []
    for i, a in enumerate(stored.actions[0]):
        for j, b in enumerate(stored.actions[1]):
            r, c = rows[a.lower()], cols[b.lower()]
            theirs = text.payoffs[c][r][::-1] if flip else text.payoffs[r][c]
            for k, (s, t) in enumerate(zip(stored.payoffs[i][j], theirs)):
                if not same_amount(s, t):
                    found.append(f"{stored.players[k]}'s payoff when {stored.players[0]} picks {a} and "
                                 f"{stored.players[1]} picks {b}: stored {_show(s)}, text {_show(t)}")
    if len(found) > _MAX_LISTED:
        found = [*found[:_MAX_LISTED], f"{len(found) - _MAX_LISTED} more payoffs differ"]
    return found


def same_amount(a: Fraction, b: Fraction) -> bool:
    """Equal as the text can tell: exactly, or (a fraction) to the six significant digits the text writes."""
    return a == b or ((a.denominator != 1 or b.denominator != 1) and f"{float(a):g}" == f"{float(b):g}")


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value} ({float(value):g})"


def summary(found: Sequence[str]) -> str:
    """The differences as one reason line."""
    return "the stored game differs from the text: " + "; ".join(found)
