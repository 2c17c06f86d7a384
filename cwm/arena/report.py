"""Arena summaries: per agent, opponent and seat, win/draw/loss rates with 95% Wilson intervals, mean payoff
with a 95% normal interval, and forfeit rates by kind; written as JSON, CSV, markdown and a bar plot."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cwm import games
from cwm.arena import compare, teams
from cwm.arena import ratings as arena_ratings
from cwm.arena.ratings import MOSTLY, fallback_mark, forfeit_counts  # noqa: F401  (re-exported)
from cwm.arena.types import FORFEIT_KINDS, MatchResult
from cwm.stats import mean_interval, wilson  # re-exported: reports and tests use them from here
from cwm.types import JSON


def summarize(results: Sequence[MatchResult]) -> list[dict[str, JSON]]:
    """One row per (agent, opponent, seat) with rates, intervals and forfeits; seat ``all`` pools seats. With
    more than two players the opponent is the other agents of the table, ``+``-joined in sorted order, so
    the table's seat orders pool into one row per seat.

    A match counts as a win for the agent when its return is strictly above every other seat's, a loss
    when some seat's is above it, and a draw otherwise. Forfeits are counted both in the outcome (the
    forfeiting seat loses) and separately: ``forfeits_<kind>`` by this agent, ``opponent_forfeits``.
    """
    groups: dict[tuple[str, str, str], list[tuple[MatchResult, int]]] = {}
    for r in results:
        if r.void:  # its process died under it: no outcome to count (``void_matches`` lists them)
            continue
        for seat, agent in enumerate(r.seats):
            others = [a for i, a in enumerate(r.seats) if i != seat]
            opponent = others[0] if len(set(others)) == 1 else "+".join(sorted(others))  # a table's rotations: one row
            for seat_key in (str(seat), "all"):
                groups.setdefault((agent, opponent, seat_key), []).append((r, seat))
    return [_row(agent, opp, seat, items) for (agent, opp, seat), items in sorted(groups.items())]


def void_matches(results: Sequence[MatchResult]) -> list[dict[str, JSON]]:
    """The matches whose process died under them (no seat blamed, no outcome), with why."""
    return [{"key": r.key, "reason": r.reason} for r in results if r.void]


def _row(agent: str, opponent: str, seat: str, items: list[tuple[MatchResult, int]]) -> dict[str, JSON]:
    n = len(items)
    wins = draws = losses = 0
    payoffs: list[float] = []
    forfeits = dict.fromkeys(FORFEIT_KINDS, 0)
    opponent_forfeits = 0
    for r, s in items:
        mine, best_other = r.returns[s], max(x for i, x in enumerate(r.returns) if i != s)
        wins += mine > best_other
        losses += mine < best_other
        draws += mine == best_other
        payoffs.append(mine)
        if r.forfeit_seat == s:
            forfeits[r.forfeit_kind] = forfeits.get(r.forfeit_kind, 0) + 1
        elif r.forfeit_seat is not None:
            opponent_forfeits += 1
    row: dict[str, JSON] = {"agent": agent, "opponent": opponent, "seat": seat, "matches": n}
    for name, plural, count in (("win", "wins", wins), ("draw", "draws", draws), ("loss", "losses", losses)):
        lo, hi = wilson(count, n)
        row |= {plural: count, f"{name}_rate": count / n, f"{name}_lo": lo, f"{name}_hi": hi}
    mean, lo, hi = mean_interval(payoffs)
    row |= {"mean_payoff": mean, "payoff_lo": lo, "payoff_hi": hi}
    total_forfeits = sum(forfeits.values())
    f_lo, f_hi = wilson(total_forfeits, n)
    row |= {"forfeit_rate": total_forfeits / n, "forfeit_lo": f_lo, "forfeit_hi": f_hi}
    row |= {f"forfeits_{k}": v for k, v in forfeits.items()} | {"opponent_forfeits": opponent_forfeits}
    row["forfeit_reasons"] = sorted({r.reason for r, s in items if r.forfeit_seat == s})[:5]
    return row | sampling(items)


SAMPLING_KEYS = ("moves", "draws", "rejected_draws", "fallback_moves")  # an ISMCTS agent's record, per match
# The names the summed record takes in a row, beside its win/draw/loss counts (a row's "draws" are drawn games)
ROW_KEYS = {"moves": "searched_moves", "draws": "sampled_worlds", "rejected_draws": "rejected_worlds",
            "fallback_moves": "fallback_moves"}


def sampling(items: Sequence[tuple[MatchResult, int]]) -> dict[str, JSON]:
    """An ISMCTS agent's sampling record summed over its matches: the fraction of draws rejected (the
    sampler's hidden state was inconsistent or raised) and of moves that fell back to a random legal action.
    Empty for an agent that keeps no such record; a count that is not a non-negative int is ignored."""
    totals = dict.fromkeys(SAMPLING_KEYS, 0)
    seen = False
    for r, s in items:
        record = r.stats[s] if s < len(r.stats) else None
        if not isinstance(record, dict):
            continue
        for key in SAMPLING_KEYS:
            value = record.get(key)
            if type(value) is int and value >= 0:
                totals[key] += value
                seen = True
    if not seen:
        return {}
    tried = totals["draws"] + totals["rejected_draws"]
    return {ROW_KEYS[k]: v for k, v in totals.items()} | {
        "rejected_draw_rate": totals["rejected_draws"] / tried if tried else None,
        "fallback_rate": totals["fallback_moves"] / totals["moves"] if totals["moves"] else None}


def fallback_rates(results: Sequence[MatchResult]) -> dict[str, float]:
    """Per agent label, the share of its searched moves that fell back to a random legal action, over all its
    matches (void ones left out); only agents that keep a sampling record (``sampling``)."""
    items: dict[str, list[tuple[MatchResult, int]]] = {}
    for r in results:
        if not r.void:
            for seat, agent in enumerate(r.seats):
                items.setdefault(agent, []).append((r, seat))
    rates = {agent: sampling(mine).get("fallback_rate") for agent, mine in items.items()}
    return {agent: rate for agent, rate in rates.items() if isinstance(rate, float)}


def mostly_fallback(results: Sequence[MatchResult]) -> dict[str, float]:
    """The agents that fell back on most of their moves (over ``MOSTLY``), with the share: their results
    measure a random player under their name (a ground-truth ISMCTS whose resampler never found a world)."""
    return {agent: rate for agent, rate in fallback_rates(results).items() if rate > MOSTLY}


def sampling_line(r: dict[str, JSON]) -> str:
    """A row's sampling record for the markdown table, ``rejected% / fell back%`` (``-``: none kept)."""
    def pct(x: JSON) -> str:
        return f"{100 * x:.1f}%" if isinstance(x, float) else "-"
    return f"{pct(r.get('rejected_draw_rate'))} / {pct(r.get('fallback_rate'))}"


def markdown(rows: Sequence[dict[str, JSON]], *, outcome: str) -> str:
    """A markdown table: W/D/L with intervals (or mean payoff), and forfeits, one line per row; with the
    draws rejected and moves fallen back when some agent keeps a sampling record (ISMCTS agents)."""
    table = _table(rows, outcome=outcome)
    if not any("searched_moves" in r for r in rows):
        return table
    head, rule, *body = table.splitlines()
    return "\n".join([head + " draws rejected / moves fell back |", rule + "---|",
                      *(line + f" {sampling_line(r)} |" for line, r in zip(body, rows))]) + "\n"


def _table(rows: Sequence[dict[str, JSON]], *, outcome: str) -> str:
    if outcome == "payoff":
        head = ("| agent | opponent | seat | n | mean payoff [95% CI] | forfeits (ill/exc/time/crash) |\n"
                "|---|---|---|---|---|---|")
        body = [f"| {r['agent']}{fallback_mark(r.get('fallback_rate'))} | {r['opponent']} | {r['seat']} | "
                f"{r['matches']} | {r['mean_payoff']:+.3f} [{r['payoff_lo']:+.3f}, {r['payoff_hi']:+.3f}] | {forfeit_counts(r)} |"
                for r in rows]
    else:
        head = ("| agent | opponent | seat | n | win [95% CI] | draw | loss | forfeits (ill/exc/time/crash) |\n"
                "|---|---|---|---|---|---|---|---|")
        body = [f"| {r['agent']}{fallback_mark(r.get('fallback_rate'))} | {r['opponent']} | {r['seat']} | "
                f"{r['matches']} | {r['win_rate']:.2f} [{r['win_lo']:.2f}, {r['win_hi']:.2f}] | {r['draw_rate']:.2f} | "
                f"{r['loss_rate']:.2f} | {forfeit_counts(r)} |" for r in rows]
    return "\n".join([head, *body]) + "\n"


def pairings(rows: Sequence[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """The pooled (seat ``all``) row of each pairing once: ``a`` vs ``b`` from the side of the agent listed
    first, so that ``b`` vs ``a`` (the same matches seen from the other seat) is left out."""
    seen: set[frozenset[str]] = set()
    found = []
    for r in rows:
        pair = frozenset((str(r["agent"]), str(r["opponent"])))
        if r["seat"] == "all" and pair not in seen:
            seen.add(pair)
            found.append(r)
    return found


def plot(rows: Sequence[dict[str, JSON]], path: Path, *, outcome: str, title: str) -> None:
    """``figure`` saved as a PNG at ``path``."""
    import matplotlib.pyplot as plt

    fig = figure(rows, outcome=outcome, title=title)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def figure(rows: Sequence[dict[str, JSON]], *, outcome: str, title: str) -> Any:
    """One bar per pairing (``pairings``), both seats pooled: the first agent's wins, draws and losses
    stacked, with one error bar, the 95% Wilson interval of its win rate at the top of its wins (the
    opponent's interval is in the table: drawn too, the two overlapped where few games were drawn); or the
    first agent's mean payoff with its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = pairings(rows)
    labels = [f"{_short(r['agent'])}\nvs {_short(r['opponent'])}" for r in shown]
    x = list(range(len(shown)))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(shown) + 2), 4.5))
    if outcome == "payoff":
        means = [float(r["mean_payoff"]) for r in shown]
        err = [[m - float(r["payoff_lo"]) for m, r in zip(means, shown)],
               [float(r["payoff_hi"]) - m for m, r in zip(means, shown)]]
        ax.bar(x, means, yerr=err, capsize=4, color="tab:blue")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylabel("first agent's mean payoff (95% CI)")
    else:
        _stacked(ax, x, shown)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def _stacked(ax: Any, x: list[int], shown: Sequence[dict[str, JSON]]) -> None:
    """Stacked win/draw/loss bars, the first agent's win-rate interval drawn at the top of its wins."""
    win, draw, loss = ([float(r[f"{k}_rate"]) for r in shown] for k in ("win", "draw", "loss"))
    ax.bar(x, win, color="tab:green", label="first agent wins")
    ax.bar(x, draw, bottom=win, color="tab:gray", label="draw")
    ax.bar(x, loss, bottom=[w + d for w, d in zip(win, draw)], color="tab:red", label="opponent wins")
    ax.errorbar(x, win, yerr=[[w - float(r["win_lo"]) for w, r in zip(win, shown)],
                              [float(r["win_hi"]) - w for w, r in zip(win, shown)]],
                fmt="none", ecolor="black", capsize=4)
    ax.set_ylim(0, 1)
    ax.set_ylabel("rate (95% Wilson CI: first agent's wins)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)


def _short(label: JSON) -> str:
    """A plot label: ``cwm:path/to/model.py`` becomes ``cwm:model``."""
    kind, _, target = str(label).partition(":")
    return f"{kind}:{Path(target).stem or target}" if "/" in target else str(label)


def write_reports(out: Path, results: Sequence[MatchResult], *, config: dict[str, JSON],
                  specs: Mapping[str, str] | None = None) -> list[dict[str, JSON]]:
    """Writes ``results.json`` (the rows, the paired comparisons, what each agent was, the leaderboard, and
    ``mostly_fallback``: the agents that fell back on most of their moves), ``results.csv``, ``results.md``,
    ``leaderboard.md`` (``cwm.arena.ratings``) and ``results.png`` under ``out``; such an agent's name carries
    ``(fell back N%)`` in both tables. ``specs`` (label -> spec) and ``config``'s ``settings`` say what each
    agent was (``cwm.arena.compare.describe_agents``: no path is written)."""

    spec = games.resolve(str(config["game"]))
    if teams.cooperative(spec):
        return write_team_reports(out, spec, results, config=config, specs=specs)
    outcome = "payoff" if spec.outcome == "payoff" else "win/draw/loss"
    rows = summarize(results)
    clean = [{k: finite_json(v) for k, v in r.items()} for r in rows]
    void = void_matches(results)
    rates = fallback_rates(results)
    board = [{k: finite_json(v) for k, v in r.items()} | ({"fallback_rate": rates[str(r["agent"])]}
                                                          if str(r["agent"]) in rates else {})
             for r in arena_ratings.leaderboard(results)]
    compared = paired_comparisons(spec, results)
    settings = config.get("settings")
    described = compare.describe_agents(specs or {},
                                        settings if isinstance(settings, dict) else {},
                                        perfect=spec.perfect_information)
    (out / "results.json").write_text(json.dumps({"config": config, "outcome": outcome, "rows": clean,
                                                  "comparisons": compared, "agent_settings": described,
                                                  "leaderboard": board, "void_matches": void,
                                                  "mostly_fallback": mostly_fallback(results)}, indent=2) + "\n",
                                      encoding="utf-8")
    (out / "leaderboard.md").write_text(arena_ratings.markdown(board), encoding="utf-8")
    _write_csv(out / "results.csv", clean)
    note = (f"\n{len(void)} void match(es): the match's own process died, no outcome counted "
            f"(results.json lists them)\n" if void else "")
    extra = [compare.markdown(compared), compare.settings_markdown(described, config.get("matches")) if described
             else ""]
    (out / "results.md").write_text("\n".join([markdown(rows, outcome=outcome) + note, *filter(None, extra)]),
                                    encoding="utf-8")
    if rows:
        plot(rows, out / "results.png", outcome=outcome, title=f"{config['game']}: arena")
    return clean


def write_team_reports(out: Path, spec: games.GameSpec, results: Sequence[MatchResult], *, config: dict[str, JSON],
                       specs: Mapping[str, str] | None = None) -> list[dict[str, JSON]]:
    """The reports of a cooperative game (``cwm.arena.teams``): ``results.json`` (outcome ``team``, the team
    rows, the team comparisons on shared deals, what each agent was), ``results.csv`` and ``results.md`` (the
    team table, scores out of the game's best, beside the published reference points where there are
    some), ``leaderboard.md`` (the same team table: seats that share a payoff have no ratings of their own)
    and ``results.png`` (each team's mean score with its interval). No win/draw/loss row is written."""
    gt = games.load_game(spec)
    rows = [{k: finite_json(v) for k, v in r.items()}
            for r in teams.team_rows(results, max_score=float(gt.max_utility()), min_score=float(gt.min_utility()))]
    compared = [{k: finite_json(v) for k, v in c.items()} for c in teams.team_comparisons(results)]
    settings = config.get("settings")
    described = compare.describe_agents(specs or {}, settings if isinstance(settings, dict) else {},
                                        perfect=spec.perfect_information)
    (out / "results.json").write_text(json.dumps({
        "config": config, "outcome": "team", "teams": rows, "team_comparisons": compared,
        "reference": teams.reference_line(spec), "agent_settings": described, "void_matches": void_matches(results),
        "mostly_fallback": mostly_fallback(results)}, indent=2) + "\n", encoding="utf-8")
    table = teams.markdown(rows, compared, reference=teams.reference_line(spec))
    (out / "leaderboard.md").write_text(table, encoding="utf-8")
    _write_csv(out / "results.csv", rows)
    extra = compare.settings_markdown(described, config.get("matches")) if described else ""
    (out / "results.md").write_text("\n".join(filter(None, [table, extra])), encoding="utf-8")
    if rows:
        _plot_teams(rows, out / "results.png", title=f"{config['game']}: team scores")
    return rows


def _plot_teams(rows: Sequence[dict[str, JSON]], path: Path, *, title: str) -> None:
    """One bar per team: its mean score with its 95% t interval (none drawn without spread)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    means = [float(r["mean_score"]) for r in rows]
    err = [[m - float(r["score_lo"]) if r["spread"] else 0.0 for m, r in zip(means, rows)],
           [float(r["score_hi"]) - m if r["spread"] else 0.0 for m, r in zip(means, rows)]]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(rows) + 2), 4.5))
    ax.bar(range(len(rows)), means, yerr=err, capsize=4, color="tab:blue")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([str(r["team"]).replace("+", "\n+") for r in rows], fontsize=7)
    ax.set_ylabel(f"team's mean score out of {rows[0]['max_score']:g} (95% CI)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def paired_comparisons(spec: games.GameSpec, results: Sequence[MatchResult]) -> list[dict[str, JSON]]:
    """The paired comparisons of ``results`` on ``spec`` (``cwm.arena.compare.comparisons``), with the
    game's equivalence margin, JSON-clean."""
    outcome = "payoff" if spec.outcome == "payoff" else "win/draw/loss"
    span = utility_range(spec)
    rows = compare.comparisons(results, outcome=outcome, margin=compare.margin_for(outcome, span),
                               bound=compare.bound_for(outcome, span))
    return [{k: finite_json(v) for k, v in r.items()} for r in rows]


def utility_range(spec: games.GameSpec) -> float | None:
    """``max - min`` utility of the game (``None`` when it states no finite bounds)."""
    game = games.load_game(spec)
    span = float(game.max_utility() - game.min_utility())
    return span if math.isfinite(span) and span > 0 else None


def _write_csv(path: Path, clean: Sequence[dict[str, JSON]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        fields = list(dict.fromkeys(k for r in clean for k in r)) or ["agent"]  # sampling columns: some rows only
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for r in clean:
            writer.writerow({k: "; ".join(v) if isinstance(v, list) else v for k, v in r.items()})


def finite_json(value: JSON) -> JSON:
    """``value`` with every float that is not finite, at any depth, made ``None`` (JSON has no NaN or
    infinity: a page's ``JSON.parse`` and strict readers refuse them)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value
