"""The fast target: a faster twin of a checked world model, with the same contract, asked for with the model's
source and its own CPU profile, and accepted only on the differential equivalence check
(``cwm.sandbox.equivalence``).

A candidate's check report comes from its evidence: each playout kind is a check type whose playouts without a
divergence pass, and the first diverging step is the one failure a refinement prompt shows, rendered as a
failed check is for a world model. A twin that could not be run (the gate, a limit) fails with the sandbox's
verdict as the report's error.
"""

from __future__ import annotations

from typing import Any

from cwm import model as cwm_model
from cwm.contract import FAST_API
from cwm.sandbox import ALLOWED_IMPORTS, Sandbox
from cwm.sandbox.checkers import Checker
from cwm.sandbox.equivalence import EquivalenceSettings, Memo, check_equivalence, divergence_failure
from cwm.synthesis.target import PromptSet, Target, prompt_rules
from cwm.types import CheckReport, TypeStats, error_report

FAST_PROMPTS = PromptSet(system="fast/system.md", initial="fast/initial.md", refine="fast/refine.md")
FRAGMENTS = ("sections/fast_api.md", "sections/fast_model.md", "sections/rules.md", "sections/code.md",
             "sections/failing_tests.md", "sections/answer.md")


def evidence_report(evidence: dict[str, Any]) -> CheckReport:
    """The check report of one candidate twin, from its evidence record.

    Each playout kind is a check type (playouts without a divergence pass), the playouts count as the
    report's transitions, and the first divergence is its one failure; a twin that could not be run, or a
    reference that could not be played, gives a report with no checks and the reason as its error.
    """
    if evidence["verdict"] not in ("equivalent", "divergent"):
        return error_report(f"{evidence['verdict']}: {evidence['reason']}")
    kinds = evidence["kinds"]
    diverging = evidence["diverging_by_kind"]
    by_type = {k: TypeStats(kinds[k]["playouts"] - diverging[k], kinds[k]["playouts"]) for k in kinds}
    failure = divergence_failure(evidence)
    total = sum(s.total for s in by_type.values())
    return CheckReport(by_type=by_type, transitions_passed=total - int(evidence["diverging_playouts"]),
                       transitions_total=total, failures=() if failure is None else (failure,),
                       breaches=int(failure is not None and failure.breach))


def fast_checker(reference: str, settings: EquivalenceSettings, *, sandbox: Sandbox | None = None,
                 memo: Memo | None = None) -> Checker:
    """Checks a candidate twin of ``reference`` by the differential equivalence check (always in the sandbox:
    ``sandbox``, or a fresh one per check); ``memo``: the reference's records, shared between checks
    (``cwm.sandbox.equivalence.Memo``)."""

    def check(source: str) -> CheckReport:
        return evidence_report(check_equivalence(reference, source, settings=settings, sandbox=sandbox, memo=memo))

    return check


def render_profile(profile: dict[str, Any]) -> tuple[str, str]:
    """A model's profile (``cwm.sandbox.equivalence.profile_model``) as a table for the prompt, slowest
    function first, and what was profiled (``"120 games"``). A profile that measured the library's freezing of
    returned states (``"library"``) gets a row for it and a note on what makes it cheap; one recorded before
    that was measured renders as it always did, so its sessions replay."""
    spent: dict[str, float] = dict(profile["cpu_s"])
    calls: dict[str, int] = dict(profile["calls"])
    library = profile.get("library")
    if library is not None:
        spent[LIBRARY_ROW], calls[LIBRARY_ROW] = library["freeze_s"], library["frozen"]
    total = sum(spent.values()) or 1.0
    rows = ["| function | calls | CPU ms | share | µs per call |", "|---|---|---|---|---|"]
    for name in sorted(spent, key=lambda n: (-spent[n], n)):
        n = calls.get(name, 0)
        if not n:
            continue
        rows.append(f"| {name} | {n} | {spent[name] * 1e3:.1f} | {spent[name] / total:.0%} | "
                    f"{spent[name] / n * 1e6:.1f} |")
    if library is not None:
        rows += ["", LIBRARY_NOTE]
    games = profile["playouts"]
    return "\n".join(rows), f"{games} game{'' if games == 1 else 's'} ({profile['states']} states)"


LIBRARY_ROW = "(cwm) making a returned state read-only"
LIBRARY_NOTE = (
    f"The row \"{LIBRARY_ROW}\" is the library's own work, not a function of the module: before anything "
    "uses a state that `apply_action` returned, cwm makes it read-only, copying every list and dict in it (a "
    "list or dict kept unchanged from the state `apply_action` was given is shared as it is, and numbers, "
    "strings, booleans and None cost almost nothing). Functions read states "
    "through those read-only lists and dicts, where each `state[key]` or `row[i]` is a Python-level call; that "
    "time is in the functions' own rows. A state with fewer lists and dicts in it (numbers at its top level: "
    "counters, bit masks) costs less of both.")


def fast_target(rules: str, model_source: str, profile: dict[str, Any], *, check: Checker,
                prompt_set: PromptSet = FAST_PROMPTS) -> Target:
    """The fast target for the checked model ``model_source``: the prompts ask for the world-model functions and
    the twin's own playout loop (``cwm.contract.FAST_API``); a candidate must define the world-model functions,
    and a ``playout`` it defines is checked exactly (``cwm.sandbox.playout_check``).

    Args:
      rules: the game's rules text.
      model_source: the checked model (shown whole; the candidates are compared with it).
      profile: its CPU profile (``cwm.sandbox.equivalence.profile_model``), shown in every prompt.
      check: the checker (``fast_checker``).
      prompt_set: the templates.
    """
    table, profiled = render_profile(profile)
    context = {
        "rules": prompt_rules(rules), "api": cwm_model.api_block(FAST_API).rstrip(),
        "allowed_imports": ", ".join(sorted(ALLOWED_IMPORTS)), "model": model_source.rstrip("\n"),
        "profile": table, "profiled": profiled,
    }
    return Target("fast", prompt_set, cwm_model.WORLD_MODEL_API, context, check, fragments=FRAGMENTS, tag="fast")


__all__ = ["FAST_PROMPTS", "LIBRARY_NOTE", "LIBRARY_ROW", "evidence_report", "fast_checker", "fast_target",
           "render_profile"]
