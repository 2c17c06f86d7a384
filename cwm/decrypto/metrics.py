"""Scores of a set of episodes: the game metrics, and the theory-of-mind scores of the probe answers.

**Game metrics** (:func:`summarize`): end conditions, turns, interception and miscommunication turns, format
failures, each with its 95% interval **clustered by keyword set** (:mod:`cwm.decrypto.clustered`): the seeds
of a run replay the same keyword sets, so the unit of every interval is the keyword set, and ``clusters`` (the
number of keyword sets) is the sample size to read, not the number of episodes.

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

Keyword answers are compared after normalisation (:func:`cwm.decrypto.parse.normalise_keyword`: case,
whitespace, articles, plurals). Every rate comes with its clustered 95% Wilson interval; an answer that never
parsed counts as a failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cwm.decrypto.clustered import cluster_mean, cluster_rate
from cwm.decrypto.parse import same_keywords
from cwm.decrypto.types import END_CONDITIONS, ROLES, Episode


def keyword_set(episode: Episode) -> tuple[str, ...]:
    """The cluster an episode belongs to: its keyword set (the seeds of a run replay the same sets)."""
    return tuple(episode.keywords)


def rate(pairs: Iterable[tuple[Episode, bool]]) -> dict[str, Any]:
    """A proportion of ``(episode, success)`` pairs with its 95% interval clustered by keyword set."""
    return cluster_rate((keyword_set(e), ok) for e, ok in pairs)


def mean(pairs: Iterable[tuple[Episode, float]]) -> dict[str, Any]:
    """A mean of ``(episode, value)`` pairs with its 95% interval clustered by keyword set."""
    return cluster_mean((keyword_set(e), value) for e, value in pairs)


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Every metric of one pairing's episodes (see docs/decrypto.md for the definitions).

    Returns:
      ``episodes``; ``end``: per end condition a rate (each rate and mean also holds ``clusters``, the
      number of keyword sets its interval is computed over); ``alice_bob_win``: survival rate; ``turns``: mean
      turns played; ``interception_turn`` / ``miscommunication_turn``: mean turn of each interception and
      miscommunication; ``interceptions_per_turn`` / ``miscommunications_per_turn``: rates over all turns
      played; ``format_failures``: per role, default moves played per episode (mean).
    """
    turns = [(e, t) for e in episodes for t in e.turns]
    return {
        "episodes": len(episodes),
        "end": {c: rate((e, e.end == c) for e in episodes) for c in END_CONDITIONS},
        "alice_bob_win": rate((e, e.end == "survived") for e in episodes),
        "turns": mean((e, len(e.turns)) for e in episodes),
        "interception_turn": mean((e, x) for e in episodes for x in e.interception_turns),
        "miscommunication_turn": mean((e, x) for e in episodes for x in e.miscommunication_turns),
        "interceptions_per_turn": rate((e, t.intercepted) for e, t in turns),
        "miscommunications_per_turn": rate((e, t.miscommunicated) for e, t in turns),
        "format_failures": {r: mean((e, e.format_failures()[r]) for e in episodes) for r in ROLES},
    }


def perspective_scores(episodes: Iterable[Episode]) -> dict[str, Any]:
    """Alice's predictions of Eve's guess, scored against what Eve did."""
    probes = [(e, p) for e in episodes for p in e.probes if p.get("kind") == "perspective"]
    return {"accuracy": rate((e, p["predicted"] == p["eve_guess"]) for e, p in probes),
            "predicted_interception": rate((e, p["predicted"] == p["code"]) for e, p in probes),
            "real_interception": rate((e, p["eve_guess"] == p["code"]) for e, p in probes),
            "unanswered": sum(p["predicted"] is None for _, p in probes)}


def keyword_scores(episodes: Iterable[Episode]) -> dict[str, Any]:
    """Eve's representational-change and false-belief passes, strong and weak, and self-consistency."""
    probes = [(e, p) for e in episodes for p in e.probes if p.get("kind") == "keywords"]
    counted = [(e, p) for e, p in probes if not same_keywords(p["keywords_now"], p["keywords"])]

    def passes(task: str, strong: bool) -> dict[str, Any]:
        if strong:
            return rate((e, same_keywords(p[task], p["keywords_now"])) for e, p in counted)
        return rate((e, p[task] is not None and not same_keywords(p[task], p["keywords"])) for e, p in counted)

    return {
        "probes": len(probes),
        "knew_keywords": len(probes) - len(counted),
        "representational_change": {"strong": passes("keywords_before", True),
                                    "weak": passes("keywords_before", False)},
        "false_belief": {"strong": passes("keywords_other", True), "weak": passes("keywords_other", False)},
        "self_consistency": rate((e, p["keywords_before"] is not None and
                                  same_keywords(p["keywords_before"], p["keywords_other"])) for e, p in counted),
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
