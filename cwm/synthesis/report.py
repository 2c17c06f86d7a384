"""What a finished synthesis run leaves for people: result.json, a markdown summary, an accuracy plot."""

from __future__ import annotations

import collections
import re
import subprocess
from pathlib import Path
from typing import Any

from cwm.stats import perfect_score_note
from cwm.synthesis.store import RunStore
from cwm.synthesis.types import SynthesisResult
from cwm.types import CheckFailure, CheckReport


def git_commit() -> str:
    """The commit of the cwm checkout in use, or "unknown" (not a git checkout, no git)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, check=True,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def write_outputs(store: RunStore, result: SynthesisResult) -> None:
    """Writes result.json, record.json (with the git commit), best_program.py, summary.md and accuracy.png."""
    store.write_json("result.json", result.to_json())
    store.write_json("record.json", {"git_commit": git_commit(), "session": store.session,
                                     "wall_time_s": result.wall_time_s, "cost_usd": result.cost_usd,
                                     "possibly_paid_calls": result.possibly_paid_calls,
                                     "possibly_paid_usd": result.possibly_paid_usd})
    if result.best_source:
        store.write_text("best_program.py", result.best_source)
    store.write_text("summary.md", summary_markdown(result))
    plot_curve(result, store.root / "accuracy.png")


def summary_markdown(result: SynthesisResult) -> str:
    """A short human-readable account of the run."""
    test = accuracy_text(result.test_accuracy, result.test_checked, result.test_games)
    what, quantity = target_words(result.target)
    lines = [
        f"# Synthesis of {what} for {result.game}",
        "",
        f"- strategy: {result.strategy}, model: `{result.model}`, seed {result.seed}, budget {result.budget} calls"
        f"{f', rules: {result.rules}' if result.rules else ''}",
        f"- outcome: {'solved (every training check passes)' if result.solved else 'not solved'}; "
        f"best program: node {result.best_node}",
        f"- {quantity}: train {result.train_accuracy:.4f}, test {test}",
        f"- checks passed (train): {result.train_pass_rate:.4f}",
        f"- LLM calls: {result.llm_calls}; tokens in/out/thinking of those calls (replayed and cached replies "
        f"included; `llm_ledger.json` counts only what each session billed): {result.input_tokens}/"
        f"{result.output_tokens}/{result.thinking_tokens}; cost ${result.cost_usd:.4f}{possibly_paid(result)}",
        f"- wall time (this session): {result.wall_time_s:.1f} s; programs in the tree: {len(result.nodes)}",
        "",
        "| test type | train | test |",
        "|---|---|---|",
    ]
    for kind in sorted(set(result.train_by_type) | set(result.test_by_type)):
        train = result.train_by_type.get(kind)
        test_rate = result.test_by_type.get(kind)
        lines.append(f"| {kind} | {_rate(train)} | {_rate(test_rate)} |")
    lines += _branch_lines(result)
    lines += ["", "## Programs", "", f"| node | parent | call | pass rate | {quantity.split(' (')[0]} | note |",
              "|---|---|---|---|---|---|"]
    for n in result.nodes:
        note = "solved" if n.solved else (n.error.splitlines()[0][:80] if n.error else "")
        lines.append(f"| {n.id} | {'root' if n.parent is None else n.parent} | {n.call} | {n.pass_rate:.4f} | "
                     f"{n.transition_accuracy:.4f} | {note} |")
    return "\n".join(lines) + "\n"


# What each synthesis target makes (with its article) and what its accuracy measures (quantity and stage): the
# transition counts of an inference or joint check are inference checks, not transitions.
TARGET_WORDS: dict[str, tuple[str, str]] = {
    "world_model": ("a world model", "transition accuracy (world model)"),
    "inference": ("an inference function", "inference accuracy (inference)"),
    "joint": ("a joint world model and inference function", "inference accuracy (joint)"),
    "value": ("a value function", "value accuracy (value function)"),
    "encoder": ("an observation encoder", "encoder accuracy (encoder)"),
    "fast": ("a fast twin of a world model", "playouts without a divergence (fast twin)"),
    "jax": ("a JAX twin of a world model", "playouts without a divergence (JAX twin)"),
}


def target_words(target: str) -> tuple[str, str]:
    """What a synthesis ``target`` makes, as a title says it (``"an inference function"``), and the name of its
    accuracy with its stage (``"inference accuracy (inference)"``); a target cwm does not know gets plain words."""
    return TARGET_WORDS.get(target, (f"a {target.replace('_', ' ')}", f"accuracy ({target.replace('_', ' ')})"))


def _branch_lines(result: SynthesisResult) -> list[str]:
    """The held-out failures by rule branch, as a section of the summary (none when there are none)."""
    if not result.test_failures_by_branch:
        return []
    kept = sum(result.test_failures_by_branch.values())
    lines = ["", "## Held-out failures by rule branch", "",
             f"Of the {kept} held-out failures kept in `test_report.json` (at most 20 per test type; the table "
             "above counts them all), by the kind of the last action before the failing check:", "",
             "| test type, after | failures |", "|---|---|"]
    lines += [f"| {branch} | {count} |" for branch, count in result.test_failures_by_branch.items()]
    return lines


def rule_branch(failure: CheckFailure) -> str:
    """The rule branch a failed check belongs to: its test type and the kind of the action that led to the
    checked state (``"legal_actions after Knock"``; ``"... after the start"`` at the initial state). An
    action's kind is its first word with every run of digits written ``#``, so ``x(1,2)`` and ``x(0,0)``, or
    ``Layoff 5s`` and ``Layoff 9h``, are one kind."""
    last = failure.history[-1].split() if failure.history else []
    kind = re.sub(r"\d+", "#", last[0]) if last else "the start"
    return f"{failure.test_type} after {kind}"


def failures_by_branch(report: CheckReport) -> dict[str, int]:
    """The report's kept failures counted by ``rule_branch``, most frequent first (ties by name)."""
    counts = collections.Counter(rule_branch(f) for f in report.failures)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def possibly_paid(result: SynthesisResult) -> str:
    """" (including ...)" naming the requests possibly paid in a cost, or "" when there were none."""
    if not result.possibly_paid_calls:
        return ""
    return (f" (including ${result.possibly_paid_usd:.4f}, a high estimate, for {result.possibly_paid_calls} "
            f"request(s) possibly paid: in flight when a session stopped, and sent again)")


def _rate(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def plot_curve(result: SynthesisResult, path: Path) -> None:
    """Best training accuracy against LLM calls (cf. the paper's Figures 6-8), as a PNG."""
    import matplotlib.pyplot as plt

    fig = curve_figure(result)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    tmp.replace(path)


def curve_figure(result: SynthesisResult) -> Any:
    """The figure ``plot_curve`` saves: the best program's accuracy (named by ``target_words``) and pass rate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6, 3.5))
    calls = [0] + [p.calls for p in result.curve]
    ax.step(calls, [0.0] + [p.best_transition_accuracy for p in result.curve], where="post", marker=".",
            label=target_words(result.target)[1])
    ax.step(calls, [0.0] + [p.best_pass_rate for p in result.curve], where="post", linestyle="--", marker=".",
            label="checks passed")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(-0.02 * max(calls[-1], 1), calls[-1] + 0.05 * max(calls[-1], 1))
    ax.set_xlabel("LLM calls")
    ax.set_ylabel("best program (train)")
    ax.set_ylim(-0.02, 1.02)
    # two short lines (the model id can be long): a one-line title was cut at both ends of the figure
    ax.set_title(f"{result.game}: {target_words(result.target)[0]}\n{result.strategy} search, "
                 f"{_short(result.model)}", fontsize=10)
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, so a title fits its figure."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def accuracy_text(accuracy: float | None, checked: int | None, games: int | None = None) -> str:
    """A held-out accuracy as reports print it, ``0.9876``; a perfect one with what it bounds, where the number
    of checked transitions is known: per check, ``1.0000 (0 of 412 wrong: error rate < 0.0073 at 95%)``, and
    with the number of held-out ``games`` they came from per game as well (the bound that needs only the games
    to be independent; ``cwm.stats.perfect_score_note``); ``n/a`` for none. Only for checks the program was not
    refined on: synthesis stops once the training checks pass, so a perfect training accuracy was selected for
    and bounds nothing."""
    if accuracy is None:
        return "n/a"
    games = games if type(games) is int else None  # read back from a run's files, which may be edited
    return f"{accuracy:.4f}" + (perfect_score_note(checked, checked, games=games) if accuracy == 1.0 and checked
                                else "")


__all__ = ["TARGET_WORDS", "accuracy_text", "failures_by_branch", "git_commit", "plot_curve", "possibly_paid",
           "rule_branch", "summary_markdown", "target_words", "write_outputs"]
