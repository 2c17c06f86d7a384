"""The Decrypto prompts: a role's view rendered through the templates under ``prompts/decrypto/``."""

from __future__ import annotations

from collections.abc import Sequence

import prompts
from cwm.decrypto.engine import format_code
from cwm.decrypto.types import Turn, View

TASK_FORMS = {  # what the ANSWER line must hold, per task (shown again in the retry prompt)
    "hints": "hint | hint | hint",
    "guess": "d-d-d",
    "predict_eve": "d-d-d",
    "keywords_now": "keyword 1 | keyword 2 | keyword 3 | keyword 4",
    "keywords_before": "keyword 1 | keyword 2 | keyword 3 | keyword 4",
    "keywords_other": "keyword 1 | keyword 2 | keyword 3 | keyword 4",
}


def template_names() -> list[str]:
    """Every template these prompts use (for the run record's prompt hashes)."""
    names = [f"decrypto/system_{r}.md" for r in ("alice", "bob", "eve")]
    names += [f"decrypto/{n}_turn.md" for n in ("alice", "bob", "eve")]
    names += [f"decrypto/{t}.md" for t in TASK_FORMS if t not in ("hints", "guess")]
    names += ["decrypto/history_turn.md", "decrypto/no_history.md", "decrypto/retry.md", "decrypto/score.md"]
    return names + [f"decrypto/outcome_{o}.md" for o in ("both", "intercepted", "miscommunicated", "none")]


def quoted(items: Sequence[str]) -> str:
    """``"a", "b", "c"``."""
    return ", ".join(f'"{i}"' for i in items)


def numbered(keywords: Sequence[str]) -> str:
    """One ``N. keyword`` line per keyword."""
    return "\n".join(f"{i}. {w}" for i, w in enumerate(keywords, start=1))


def _outcome(turn: Turn) -> str:
    key = {(True, True): "both", (True, False): "intercepted", (False, True): "miscommunicated",
           (False, False): "none"}[(turn.intercepted, turn.miscommunicated)]
    return prompts.render(f"decrypto/outcome_{key}.md").strip()


def history_text(history: Sequence[Turn]) -> str:
    """Every played turn on one line each (public: codes revealed)."""
    if not history:
        return prompts.render("decrypto/no_history.md").strip()
    return "\n".join(prompts.render(
        "decrypto/history_turn.md", number=t.number, hints=quoted(t.hints), code=format_code(t.code),
        bob_guess=format_code(t.bob_guess), eve_guess=format_code(t.eve_guess), outcome=_outcome(t)).strip()
        for t in history)


def score_text(history: Sequence[Turn]) -> str:
    return prompts.render("decrypto/score.md", interceptions=sum(t.intercepted for t in history),
                          miscommunications=sum(t.miscommunicated for t in history)).strip()


def system_prompt(role: str) -> str:
    """The role's system prompt: the rules, then the role and its answer format."""
    return prompts.render(f"decrypto/system_{role}.md")


def turn_prompt(view: View) -> str:
    """The prompt that asks the view's role for its move this turn."""
    common = {"turn": view.turn, "history": history_text(view.history), "score": score_text(view.history)}
    if view.role == "alice":
        return prompts.render("decrypto/alice_turn.md", **common, keywords=numbered(view.keywords),
                              code=format_code(view.code))
    if view.role == "bob":
        return prompts.render("decrypto/bob_turn.md", **common, keywords=numbered(view.keywords),
                              hints=quoted(view.hints))
    return prompts.render("decrypto/eve_turn.md", **common, hints=quoted(view.hints))


def retry_prompt(task: str, why: str, remaining: int) -> str:
    return prompts.render("decrypto/retry.md", why=why.rstrip("."), form=TASK_FORMS[task], remaining=remaining)
