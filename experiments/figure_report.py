"""The outputs of ``experiments/arena_figure.py``: the CWM agent's results per game and opponent as a markdown
table and a figure (a panel per game, a stacked win/draw/loss bar per opponent), the Bradley-Terry
leaderboard across games (head to head over the games each pair shares, each game weighted equally), and what
each game's bundle and arena cost."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cwm.arena import compare
from cwm.arena import ratings as arena_ratings
from cwm.arena import report as arena_report
from cwm.arena.types import MatchResult
from cwm.bundle.files import MANIFEST, SEAL_MATCHES, provenance_seal, read_json_object


def category(opponent: str) -> str:
    """The Figure 2 group of an opponent label."""
    if opponent.startswith("gt-"):
        return "ground truth"
    return "LLM" if opponent.startswith("llm") else opponent


def leaderboard(results_by_game: Mapping[str, Sequence[MatchResult]], *,
                bootstrap: int = arena_ratings.DEFAULT_BOOTSTRAP, seed: int = 0) -> list[dict[str, Any]]:
    """One row per agent, ranked by head-to-head over shared games (``cwm.arena.ratings.head_to_head``: each
    pair's mean rating difference over the games both played, each game weighted equally): rows are ordered
    by ``copeland`` (the agents it is rated above minus those it is rated below, by the point difference;
    Copeland's rule), then by the mean of its differences; ``ahead`` and ``behind`` count the agents whose
    difference's 95% interval lies above or below zero, ``unranked`` the agents it shares no game with. ``rating``/``rating_lo``/``rating_hi``: its Bradley-Terry rating over the games every agent
    played (``ratings_across``; ``None`` when there is none), and the ``games`` it played."""
    pairs = arena_ratings.head_to_head(results_by_game, bootstrap=bootstrap, seed=seed)
    common = arena_ratings.common_games(results_by_game)
    rated = arena_ratings.ratings_across({g: results_by_game[g] for g in common}, bootstrap=bootstrap, seed=seed)
    labels = list(dict.fromkeys(s for results in results_by_game.values() for r in results for s in r.seats))
    rows = [_standing(label, pairs) | {
        "rating": rated[label][0] if label in rated else None,
        "rating_lo": rated[label][1] if label in rated else None,
        "rating_hi": rated[label][2] if label in rated else None, "rated_on": common,
        "games": [g for g, results in results_by_game.items() if any(label in r.seats for r in results)]}
        for label in labels]
    return sorted(rows, key=lambda row: (-row["copeland"], -row["mean_difference"]))


def _standing(label: str, pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """An agent's head-to-head record: the agents it is shown ahead of and behind, those it shares no game
    with, and the mean of its rating differences over the pairs that share a game."""
    ahead, behind, unranked, diffs, mine, copeland = [], [], [], [], [], 0
    for p in pairs:
        if label not in (p["agent"], p["opponent"]):
            continue
        sign, other = (1, p["opponent"]) if p["agent"] == label else (-1, p["agent"])
        seen = {"opponent": other, "games": p["games"]}
        mine.append(seen)
        if p["difference"] is None:
            unranked.append(other)
            continue
        diffs.append(sign * p["difference"])
        copeland += (diffs[-1] > 0) - (diffs[-1] < 0)
        lo, hi = sorted((sign * p["difference_lo"], sign * p["difference_hi"]))
        seen |= {"difference": sign * p["difference"], "difference_lo": lo, "difference_hi": hi}
        (ahead if lo > 0 else behind if hi < 0 else []).append(other)
    return {"agent": label, "copeland": copeland, "ahead": len(ahead), "behind": len(behind), "unranked": unranked,
            "mean_difference": sum(diffs) / len(diffs) if diffs else 0.0, "head_to_head": mine}


def leaderboard_markdown(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The leaderboard across games as markdown lines (nothing when no game was played), then each pair's
    head-to-head over its shared games, from the side of the agent ranked higher."""
    if not rows:
        return []
    common = rows[0].get("rated_on") or []
    lines = ["", "## Leaderboard across games", "",
             "Ratings are fitted per game (Bradley-Terry, Elo scale). Each pair of agents is compared over the games "
             "both played, each such game weighted equally (its mean rating difference); agents are ranked by "
             "Copeland's rule on those differences (opponents rated below minus above), agents with no shared game "
             "are not compared. Ahead/behind count the differences whose bootstrap 95% interval lies above/below "
             "zero. The rating column is over the games every agent played"
             + (f" ({', '.join(common)})." if common else " (none here, so no single rating is given)."), "",
             "| # | agent | ahead / behind | not compared with | rating [95% CI] | games |", "|---|---|---|---|---|---|"]
    lines += [f"| {i} | {r['agent']} | {r['ahead']} / {r['behind']} | {', '.join(r['unranked']) or '-'} | "
              f"{_rating(r)} | {', '.join(r['games'])} |" for i, r in enumerate(rows, 1)]
    lines += ["", "| agent | opponent | shared games | rating difference [95% CI] |", "|---|---|---|---|"]
    for i, r in enumerate(rows):
        below = {str(x["agent"]) for x in rows[i + 1:]}
        lines += [f"| {r['agent']} | {p['opponent']} | {', '.join(p['games']) or 'none: not ranked'} | "
                  + (f"{p['difference']:+.0f} [{p['difference_lo']:+.0f}, {p['difference_hi']:+.0f}]"
                     if "difference" in p else "-") + " |" for p in r["head_to_head"] if p["opponent"] in below]
    return lines


def _rating(r: dict[str, Any]) -> str:
    return "-" if r["rating"] is None else f"{r['rating']:.0f} [{r['rating_lo']:.0f}, {r['rating_hi']:.0f}]"


def provenance(bundle_dir: Path) -> dict[str, Any]:
    """Where a game's bundle came from (its manifest's creation, export check and synthesis provenance, the
    manifest read within its bounds), and ``provenance_hash``: what its ``provenance_sha256`` says of it
    (``cwm.bundle.files.provenance_seal``: it catches accidental or naive edits, not forgery).

    Raises:
      BundleError: the manifest is over its size limit or not a JSON object (one line naming it).
    """
    manifest = read_json_object(bundle_dir / MANIFEST)
    prov = manifest.get("provenance")
    prov = prov if type(prov) is dict else {}
    keys = ("llm", "answered_by", "relay", "strategy", "seed", "solved", "train_accuracy", "test_accuracy", "llm_calls", "prompt_hashes")
    return {"path": str(bundle_dir.resolve()), "created_at": manifest.get("created_at"),
            "export_check": manifest.get("export_check"), "provenance_hash": provenance_seal(manifest)} | {
        k: prov.get(k) for k in keys}


def syntheses_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """With ``--protocol paper``, a section per game: each synthesis's seed, its selection score, whether it
    survived, and how the CWM agent did in the matches it was drawn for, per opponent (the spread across
    syntheses); empty for the single protocol."""
    seen: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("syntheses") and r["game"] not in seen:
            seen[r["game"]] = r["syntheses"]
    if not seen:
        return ""
    lines = ["", "## Syntheses (the paper's protocol)", "",
             "Each game's CWM agent draws one surviving synthesis per match (sample rejection, `cwm select`); "
             "per synthesis, its mean in the selection and its record (wins-draws-losses) in the matches it was "
             "drawn for.", ""]
    for game, syntheses in seen.items():
        opponents = sorted({o for s in syntheses for o in s["matches"]})
        lines += [f"### {game}", "", "| seed | selection mean | survived | " + " | ".join(opponents) + " |",
                  "|---|---|---|" + "---|" * len(opponents)]
        for s in syntheses:
            mean = "n/a" if s["selection_mean"] is None else f"{s['selection_mean']:+.3f}"
            cells = [_record(s["matches"].get(o)) for o in opponents]
            lines.append(f"| {s['seed']} | {mean} | {'yes' if s['survived'] else 'no'} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _record(counts: Mapping[str, int] | None) -> str:
    return "not drawn" if not counts else f"{counts['wins']}-{counts['draws']}-{counts['losses']}"


def provenance_notes(bundles: Mapping[str, Mapping[str, Any]]) -> str:
    """A markdown paragraph naming each game whose bundle's provenance is not covered by a matching hash
    (``provenance``'s ``provenance_hash``), so a reader does not take its who-answered fields on trust; empty
    when every bundle's matches."""
    flagged = [f"{game} ({b.get('provenance_hash')})" for game, b in sorted(bundles.items())
               if b.get("provenance_hash") != SEAL_MATCHES]
    if not flagged:
        return ""
    return (f"\nBundle provenance not vouched for by its hash: {', '.join(flagged)}; who answered and how the "
            f"texts travelled are the bundle author's word (`arena.json`, `bundles`).\n")


def costs(out: Path, games: Sequence[str]) -> dict[str, Any]:
    """Each game's arena cost estimate and real wall time (``<game>/arena/cost.json``)."""
    paths = {game: out / game / "arena" / "cost.json" for game in games}
    return {game: json.loads(path.read_text(encoding="utf-8")) for game, path in paths.items() if path.is_file()}


def markdown(rows: Sequence[dict[str, Any]], board: Sequence[dict[str, Any]] = ()) -> str:
    """One line per game and opponent: the CWM agent's results over both seats; then the leaderboard
    across games (``leaderboard``), when given."""
    lines = [
        "# CWM agent vs random, ground-truth planner and direct LLM (Figure 2 layout)",
        "",
        "| game | opponent | n | CWM win [95% CI] | draw | loss | CWM mean payoff [95% CI] | CWM forfeits "
        "(ill/exc/time/crash) | opponent forfeits | CWM draws rejected / moves fell back |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.get("status"):
            lines.append(f"| {r['game']} | {r['status']} (`{r['recording']}`) |" + " |" * 8)
            continue
        payoff = "n/a" if r["mean_payoff"] is None else (
            f"{r['mean_payoff']:+.3f} [{r['payoff_lo']:+.3f}, {r['payoff_hi']:+.3f}]")
        lines.append(
            f"| {r['game']} | {r['opponent']} | {r['matches']} | {r['win_rate']:.2f} [{r['win_lo']:.2f}, "
            f"{r['win_hi']:.2f}] | {r['draw_rate']:.2f} | {r['loss_rate']:.2f} | {payoff} | "
            f"{arena_report.forfeit_counts(r)} | {r['opponent_forfeits']} | {arena_report.sampling_line(r)} |")
    lines += ["", "Both seats pooled; per-seat rows and every match are under `<game>/arena/`. A forfeit (illegal "
              "move, exception, timeout, worker crash) is a loss for the forfeiting side and is also counted apart. "
              "Draws rejected / moves fell back (ISMCTS, imperfect information): the CWM agent's inference draws "
              "its model rejected, and its moves played at random because search failed (`-`: MCTS)."]
    return "\n".join(lines + paired_lines(rows) + leaderboard_markdown(board)) + "\n"


def paired_lines(rows: Sequence[dict[str, Any]], *, second: str = "CWM agent's settings",
                 cell: Callable[[dict[str, Any], dict[str, Any]], str] = lambda r, c: str(r.get("settings", "-"))
                 ) -> list[str]:
    """Each row's paired comparison (``cwm.arena.compare``: seat-swapped pairs on one deal, the bounded-mean
    Clopper-Pearson interval over pairs, the MDE at 80% power and the verdict), as a markdown section; the
    second column is headed ``second`` and filled by ``cell(row, comparison)`` (default: the CWM agent's
    settings)."""
    found = [r for r in rows if isinstance(r.get("paired"), dict)]
    if not found:
        return []
    lines = ["", "## Paired comparisons", "",
             "Seat-swapped pairs on one deal; score = (wins + draws/2) / matches (0.50 even) in win/draw/loss games, "
             "edge = half the mean payoff difference in payoff games; 95% bounded-mean Clopper-Pearson interval over pairs; MDE: the smallest "
             "difference detectable at 80% power.", "",
             f"| game | {second} | opponent | matches (pairs) | score or edge [95% CI] | MDE | verdict |",
             "|---|---|---|---|---|---|---|"]
    for r in found:
        c = r["paired"]
        mde = "-" if c["mde"] is None else "±" + compare.shown(c, c["mde"], sign=False)
        lines.append(f"| {r['game']} | {cell(r, c)} | {c['opponent']} | {c['matches']} ({c['pairs']}) | "
                     f"{compare.shown(c, c['mean'])} [{compare.shown(c, c['lo'])}, {compare.shown(c, c['hi'])}] | "
                     f"{mde} | {c['verdict']} |")
    return lines


def plot(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """One panel per game, one stacked win/draw/loss bar per opponent group, 95% Wilson interval on wins; a
    game not played (``no recording``) is an empty panel saying so."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["game"] for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(2.6 * len(names) + 1.2, 3.6), squeeze=False, sharey=True)
    handles: list[Any] = []
    for ax, name in zip(axes[0], names):
        mine = [r for r in rows if r["game"] == name and not r.get("status")]
        if mine:
            drawn = _bars(ax, mine)
            handles = handles or drawn
        else:
            ax.text(0.5, 0.5, "no recording", ha="center", va="center", transform=ax.transAxes, fontsize=9)
            ax.set_xticks([])
        ax.set_title(name, fontsize=10)
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("fraction of matches (both seats)")
    axes[0][-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _bars(ax: Any, mine: Sequence[dict[str, Any]]) -> list[Any]:
    """A game's stacked bars, one per opponent; the legend's handles."""
    x = list(range(len(mine)))
    win, draw, loss = ([float(r[k]) for r in mine] for k in ("win_rate", "draw_rate", "loss_rate"))
    err = [[w - float(r["win_lo"]) for w, r in zip(win, mine)], [float(r["win_hi"]) - w for w, r in zip(win, mine)]]
    handles = [ax.bar(x, win, yerr=err, capsize=3, color="tab:green", label="CWM wins"),
               ax.bar(x, draw, bottom=win, color="tab:gray", label="draws"),
               ax.bar(x, loss, bottom=[w + d for w, d in zip(win, draw)], color="tab:red", label="CWM losses")]
    ax.set_xticks(x)
    ax.set_xticklabels([f"vs {category(r['opponent'])}" for r in mine], fontsize=8, rotation=20)
    return handles
