"""The sleeper programs of the hostile-model suite, read from tests/data/sleepers/ and made whole.

A sleeper file holds what one sleeper adds to a correct model: a header that says what it attacks, when it
wakes and what each stage of the pipeline must make of it, then the code that wraps or replaces contract
functions. The program the pipeline sees is the reference tic-tac-toe model
(tests/data/reference/tic_tac_toe_model.py), then the sleeper's code, then the shared wake-up
(tests/data/sleepers/_wake.py, which counts every contract call): one complete, self-contained model that
passes the checks on the recorded games until it wakes.

Header keys (``# key: value`` lines at the top, several lines of one key joined):

- ``sleeper``: the attack; ``trigger``: when it wakes.
- ``check``: ``passes`` or ``static: TEXT`` (`cwm check`, in the sandbox).
- ``export``: ``ok`` or ``refused: TEXT`` (``export_bundle``: the model checked on the training games).
- ``load``: ``ok`` or ``refused: TEXT`` (``load_bundle``, `cwm inspect`: the stored games and random play;
  a program the gate refuses is loaded from a bundle forged around it).
- ``arena``: ``plays`` (it never forfeits) or ``KIND: TEXT``: every match of the sleeper is forfeited by its
  seat as KIND (``timeout``, ``crash``, ``exception``, ``illegal``) with TEXT in the reason.
- Files under ``value/`` are a bundle's value.py beside the correct reference model (no ``check`` line).
- ``ungated``: (files under ``ungated/`` only) the forfeit in a planning worker with the gate off, as
  ``arena``; ``ungated-bwrap:``/``ungated-process:`` where the isolation modes differ.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
SLEEPERS = DATA / "sleepers"
UNGATED = SLEEPERS / "ungated"
VALUES = SLEEPERS / "value"
REFERENCE = (DATA / "reference" / "tic_tac_toe_model.py").read_text(encoding="utf-8")
WAKE = (SLEEPERS / "_wake.py").read_text(encoding="utf-8")
CHANNEL = (UNGATED / "_channel.py").read_text(encoding="utf-8")
MARKER_GLOB = "cwm-sleeper-*"  # every file a sleeper tries to write is named like this
LISTEN_PORT = 47613  # the 127.0.0.1 port the sleepers that open sockets try (the suite listens there)
STAGES = ("check", "export", "load", "arena")


@dataclasses.dataclass(frozen=True)
class Program:
    """One sleeper: its name, the whole program's source, its header, and the bundle's other code files
    (a value-function sleeper rides beside the correct reference model)."""

    name: str
    source: str
    header: dict[str, str]
    extra: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def gated_out(self) -> bool:
        """Whether the static gate refuses it (then no stage runs a line of it)."""
        return self.header["check"].startswith("static")

    def expect(self, key: str, mode: str = "") -> tuple[str, str]:
        """``(outcome, text)`` of a header line (``("refused", "static: ...")``, ``("plays", "")``)."""
        value = self.header.get(f"{key}-{mode}", self.header.get(key, ""))
        outcome, _, text = value.partition(": ")
        return outcome, text


def header_of(text: str) -> dict[str, str]:
    """The ``# key: value`` lines at the top of a sleeper file (a key given on several lines joined)."""
    header: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("# ") or ":" not in line:
            break
        key, _, value = line[2:].partition(":")
        key = key.strip()
        header[key] = f"{header[key]} {value.strip()}" if key in header else value.strip()
    return header


def read(path: Path) -> Program:
    """The program of one sleeper file (the reference model, the file, the wake-up; an ungated sleeper also
    gets the session's answer channel, ``ungated/_channel.py``)."""
    text = path.read_text(encoding="utf-8")
    source = f"{REFERENCE}\n\n# ---- the sleeper ({path.name})\n{text}\n\n# ---- the wake-up\n{WAKE}"
    if path.parent == UNGATED:
        source += f"\n\n# ---- the answer channel\n{CHANNEL}"
    return Program(path.stem, source, header_of(text))


def programs(folder: Path = SLEEPERS) -> list[Program]:
    """Every sleeper in ``folder`` (files starting with ``_`` are shared parts, not programs)."""
    return [read(p) for p in sorted(folder.glob("*.py")) if not p.name.startswith("_")]


def value_programs() -> list[Program]:
    """The value-function sleepers (tests/data/sleepers/value): the reference model with the file as value.py."""
    return [Program(p.stem, REFERENCE, header_of(p.read_text(encoding="utf-8")),
                    {"value.py": p.read_text(encoding="utf-8")}) for p in sorted(VALUES.glob("*.py"))]
