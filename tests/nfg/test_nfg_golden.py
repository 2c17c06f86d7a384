"""Golden outputs: each family's seeded tasks, texts, CWM-route answers and scores hash to recorded digests.

tests/data/nfg/golden.json holds one SHA-256 per family over seeds ``SEEDS``, items ``0..ITEMS-1``: the task
record (formal game, question, answer key, chat messages), the question paragraph in both probability styles,
the CWM route's request and its answer from a faithful and from a sign-flipped transcription, and the scores
of fixed replies. A digest that changes means a seeded task set, a prompt or a score changed: recorded LLM
sessions would no longer replay. When that is the intent, rewrite the file with
``python tests/nfg/test_nfg_golden.py`` (from the repository root) and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from cwm.nfg import FAMILIES, Task, generate, render, route
from cwm.nfg.parse import parse_reply
from cwm.nfg.score import judge
from cwm.types import JSON

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "nfg" / "golden.json"
SEEDS = (0, 1)
ITEMS = 8


def _transcribed_data(task: Task) -> dict[str, JSON]:
    """The data names a faithful transcription of ``task`` defines, written as an LLM might write them."""
    q, roles = task.question, task.question.get("roles", {})
    by_family: dict[str, dict[str, JSON]] = {
        "best_response_pure": {"OPPONENT_ACTION": q.get("opponent_action")},
        "estimate_mixed": {"OPPONENT_HISTORY": q.get("opponent_history")},
        "best_response_mixed": {"OPPONENT_MIX": {a: float(Fraction(str(p))) for a, p in q.get("opponent_mix", {}).items()}},
        "classify_partner": {"HISTORY": q.get("history"), "COOPERATE": roles.get("cooperate"),
                             "DEFECT": roles.get("defect"), "TREMBLE": 0.05},
        "play_strategy": {"STRATEGY": str(q.get("strategy")).replace("-", " ").title(),
                          "PARTNER_HISTORY": q.get("partner_history"), "COOPERATE": roles.get("cooperate"),
                          "DEFECT": roles.get("defect")},
    }
    return by_family.get(task.family, {})


def _table(task: Task, sign: int) -> dict[str, JSON]:
    game = task.game
    return {"players": list(game.players), "me": game.players[task.me], "actions": [list(a) for a in game.actions],
            "payoffs": [[[sign * float(u0), sign * float(u1)] for u0, u1 in row] for row in game.payoffs],
            "data": _transcribed_data(task)}


def _fingerprint(task: Task) -> list[JSON]:
    out: list[JSON] = [task.to_json(), route.request_text(task)]
    out += [render.question_text(task.family, task.game, task.me, task.question, probabilities=p)
            for p in ("percent", "fraction")]
    for sign in (1, -1):
        try:
            out.append(route.answer_from_table(task, _table(task, sign)).to_json())
        except route.RouteError as e:
            out.append(f"RouteError: {e}")
    ideal = task.key.ideal()
    replies = (f"Answer: {ideal if isinstance(ideal, str) else ideal[0]}", f"I would choose {task.key.vocabulary[0]}",
               "no idea", f"Answer: {', '.join(task.key.vocabulary)}")
    out += [judge(task, "direct", r, parse_reply(r, task.key)).to_json() for r in replies]
    return out


def digest(family: str) -> str:
    """The SHA-256 of ``family``'s fingerprints over ``SEEDS`` and ``ITEMS``."""
    h = hashlib.sha256()
    for seed in SEEDS:
        for task in generate([family], ITEMS, seed=seed):
            h.update(json.dumps(_fingerprint(task), sort_keys=True).encode())
    return h.hexdigest()


@pytest.mark.parametrize("family", FAMILIES)
def test_seeded_outputs_match_the_golden_digest(family: str) -> None:
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert (recorded["seeds"], recorded["items"]) == (list(SEEDS), ITEMS)
    assert digest(family) == recorded["digests"][family], f"{family}: seeded outputs changed (see module docstring)"


def test_every_family_has_a_golden_digest() -> None:
    assert sorted(json.loads(GOLDEN.read_text(encoding="utf-8"))["digests"]) == sorted(FAMILIES)


if __name__ == "__main__":
    digests = {f: digest(f) for f in FAMILIES}
    GOLDEN.write_text(json.dumps({"seeds": list(SEEDS), "items": ITEMS, "digests": digests}, indent=2) + "\n",
                      encoding="utf-8")
    print(f"wrote {len(digests)} digests to {GOLDEN}", file=sys.stderr)
