"""Hot-seat play at one terminal: any role a person, the others agents.

A private view is shown only to its player: before it, the screen is cleared and the player named is asked
to take the keyboard and press Enter; after the answer, the screen is cleared again. Entries are read by
the same functions as LLM answers (:mod:`cwm.decrypto.parse`); an entry that breaks the rules is refused
with the reason and asked again. Each entry is logged as an :class:`~cwm.decrypto.types.Attempt`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from cwm.decrypto import parse
from cwm.decrypto.engine import format_code
from cwm.decrypto.prompting import history_text, numbered, quoted, score_text
from cwm.decrypto.types import Attempt, Code, Turn, View

CLEAR = "\033[2J\033[H"
TITLES = {"alice": "ALICE (encoder)", "bob": "BOB (decoder)", "eve": "EVE (interceptor)"}


def _print(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


class Terminal:
    """Where a hot-seat game reads and writes: ``read(prompt)`` and ``write(text)`` (stdin/stdout)."""

    def __init__(self, read: Callable[[str], str] = input, write: Callable[[str], None] | None = None) -> None:
        self.read = read
        self.write = write or _print

    def clear(self) -> None:
        self.write(CLEAR)

    def handover(self, who: str) -> None:
        """Clears the screen and waits until ``who`` has the keyboard."""
        self.clear()
        self.read(f"Pass the keyboard to {who}. {who}: press Enter when only you can see the screen. ")
        self.clear()

    def announce(self, turn: Turn) -> None:
        """The public reveal at the end of a turn, for everyone."""
        self.clear()
        self.write(f"Turn {turn.number} revealed: hints {quoted(turn.hints)}; the code was "
                   f"{format_code(turn.code)}; Bob guessed {format_code(turn.bob_guess)}, "
                   f"Eve guessed {format_code(turn.eve_guess)}.")
        self.read("Everyone may look. Press Enter to go on. ")


class HumanAgent:
    """A person playing ``role`` through a :class:`Terminal`."""

    def __init__(self, role: str, terminal: Terminal | None = None, *, name: str = "human") -> None:
        self.role, self.name = role, name
        self.terminal = terminal or Terminal()
        self.attempts: list[Attempt] = []

    def take_attempts(self) -> list[Attempt]:
        taken, self.attempts = self.attempts, []
        return taken

    def hints(self, view: View) -> tuple[str, ...]:
        return self._ask(view, f"Your code: {format_code(view.code)}. Give one hint per digit, in order, "
                               "separated by '|': ", "hints", parse.hints_reader(view.keywords))

    def guess(self, view: View) -> Code:
        return self._ask(view, f"The hints, in order: {quoted(view.hints)}. Your guess (like 3-1-4): ", "guess",
                         parse.read_code)

    def _ask(self, view: View, question: str, task: str, reader: parse.Reader):  # type: ignore[no-untyped-def]
        t = self.terminal
        t.handover(TITLES[self.role])
        t.write(f"=== {TITLES[self.role]}, turn {view.turn} of 8 ===")
        t.write("The game so far:\n" + history_text(view.history))
        t.write("Score: " + score_text(view.history))
        if view.keywords:
            t.write("Your secret keywords:\n" + numbered(view.keywords))
        attempt = 0
        while True:
            entry = t.read(question)
            value, why = reader(entry.strip())
            self.attempts.append(Attempt(self.role, view.turn, task, attempt, entry, "ok" if why == "" else "invalid",
                                         why, list(value) if value is not None else None))
            if value is not None:
                break
            t.write(f"Not accepted: {why}. Try again.")
            attempt += 1
        t.clear()
        t.read("Thank you. Press Enter, then pass the keyboard on. ")
        return value
