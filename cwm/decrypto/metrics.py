"""Scores of a set of episodes: the game metrics, and the theory-of-mind scores of the probe answers.

**Game metrics** (:func:`summarize`): end conditions, turns, interception and miscommunication turns, format
failures, each with its 95% interval (Wilson for proportions, normal for means).

**Theory of mind** (the published benchmark's three tasks):

- **Perspective taking**: right after giving her hints, Alice predicts Eve's guess. ``accuracy`` is how often
  the prediction equals Eve's real guess; ``predicted_interception`` how often Alice predicts that Eve will
  intercept (her prediction equals the code), to set against ``real_interception``, how often Eve did.
- **Representational change** and **false belief**: from turn 2 on, before she guesses, Eve is asked on a
  branch of her context (1) what she thinks the four keywords are; then, the true keywords revealed, (2)
  what she thought they were before the reveal (representational change) and (3) what a second
  interceptor who saw everything but the reveal thinks they are (false belief). Only probes whose answer
  (1) is not the true keywords count. A **strong** pass answers (1) again; a **weak** pass answers anything
  but the true keywords. **Self-consistency**: answers (2) and (3) agree.

Every rate comes with its 95% Wilson interval (``cwm.stats.wilson``); an answer that never parsed counts as
a failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cwm.decrypto.parse import same_keywords
from cwm.decrypto.types import END_CONDITIONS, ROLES, Episode
from cwm.stats import mean_interval, wilson


def rate(successes: int, n: int) -> dict[str, Any]:
    """A proportion with its 95% Wilson interval (``rate`` is None when ``n`` is 0)."""
    low, high = wilson(successes, n)
    return {"successes": successes, "n": n, "rate": successes / n if n else None, "low": low, "high": high}


def mean(values: Sequence[float]) -> dict[str, Any]:
    """A mean with its 95% interval (None throughout when there are no values)."""
    if not values:
        return {"mean": None, "low": None, "high": None, "n": 0}
    m, low, high = mean_interval(list(values))
    return {"mean": m, "low": low, "high": high, "n": len(values)}


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Every metric of one pairing's episodes (see docs/decrypto.md for the definitions).

    Returns:
      ``episodes``; ``end``: per end condition a rate; ``alice_bob_win``: survival rate; ``turns``: mean
      turns played; ``interception_turn`` / ``miscommunication_turn``: mean turn of each interception and
      miscommunication; ``interceptions_per_turn`` / ``miscommunications_per_turn``: rates over all turns
      played; ``format_failures``: per role, default moves played per episode (mean).
    """
    n = len(episodes)
    turns = [t for e in episodes for t in e.turns]
    return {
        "episodes": n,
        "end": {c: rate(sum(e.end == c for e in episodes), n) for c in END_CONDITIONS},
        "alice_bob_win": rate(sum(e.end == "survived" for e in episodes), n),
        "turns": mean([len(e.turns) for e in episodes]),
        "interception_turn": mean([x for e in episodes for x in e.interception_turns]),
        "miscommunication_turn": mean([x for e in episodes for x in e.miscommunication_turns]),
        "interceptions_per_turn": rate(sum(t.intercepted for t in turns), len(turns)),
        "miscommunications_per_turn": rate(sum(t.miscommunicated for t in turns), len(turns)),
        "format_failures": {r: mean([e.format_failures()[r] for e in episodes]) for r in ROLES},
    }


def perspective_scores(episodes: Iterable[Episode]) -> dict[str, Any]:
    """Alice's predictions of Eve's guess, scored against what Eve did."""
    probes = [p for e in episodes for p in e.probes if p.get("kind") == "perspective"]
    right = sum(p["predicted"] == p["eve_guess"] for p in probes)
    predicted = sum(p["predicted"] == p["code"] for p in probes)
    real = sum(p["eve_guess"] == p["code"] for p in probes)
    return {"accuracy": rate(right, len(probes)), "predicted_interception": rate(predicted, len(probes)),
            "real_interception": rate(real, len(probes)),
            "unanswered": sum(p["predicted"] is None for p in probes)}


def keyword_scores(episodes: Iterable[Episode]) -> dict[str, Any]:
    """Eve's representational-change and false-belief passes, strong and weak, and self-consistency."""
    probes = [p for e in episodes for p in e.probes if p.get("kind") == "keywords"]
    counted = [p for p in probes if not same_keywords(p["keywords_now"], p["keywords"])]
    n = len(counted)

    def passes(task: str, strong: bool) -> dict[str, Any]:
        if strong:
            ok = sum(same_keywords(p[task], p["keywords_now"]) for p in counted)
        else:
            ok = sum(p[task] is not None and not same_keywords(p[task], p["keywords"]) for p in counted)
        return rate(ok, n)

    return {
        "probes": len(probes),
        "knew_keywords": len(probes) - n,
        "representational_change": {"strong": passes("keywords_before", True),
                                    "weak": passes("keywords_before", False)},
        "false_belief": {"strong": passes("keywords_other", True), "weak": passes("keywords_other", False)},
        "self_consistency": rate(sum(p["keywords_before"] is not None and
                                     same_keywords(p["keywords_before"], p["keywords_other"]) for p in counted), n),
    }


def tom_report(episodes: Sequence[Episode]) -> dict[str, dict[str, Any]]:
    """Scores per model: perspective taking by Alice's agent, keyword tasks by Eve's agent."""
    report: dict[str, dict[str, Any]] = {}
    for name in sorted({e.players["alice"] for e in episodes}):
        mine = [e for e in episodes if e.players["alice"] == name]
        if any(p.get("kind") == "perspective" for e in mine for p in e.probes):
            report.setdefault(name, {})["perspective"] = perspective_scores(mine)
    for name in sorted({e.players["eve"] for e in episodes}):
        mine = [e for e in episodes if e.players["eve"] == name]
        if any(p.get("kind") == "keywords" for e in mine for p in e.probes):
            report.setdefault(name, {})["keywords"] = keyword_scores(mine)
    return report
