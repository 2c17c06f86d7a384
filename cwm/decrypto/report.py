"""Result files of a Decrypto run: results.json, results.csv, results.md (with the cross-play matrix), plots
(win rate and turns per pairing, end-condition stacks, the k sweep), and the static HTML transcript viewer.

The viewer is one self-contained page, chat-like: per turn the hints, both guesses and the reveal. It has no
script. Every text from an episode (names, role keys, keywords, hints, codes and guesses, the episode id) is
HTML-escaped, so a hostile hint shows as text; episode files are checked by type when read
(``cwm.decrypto.types.Episode.from_json``)."""

from __future__ import annotations

import csv
import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwm.decrypto.engine import format_code
from cwm.decrypto.specs import configuration
from cwm.decrypto.types import END_CONDITIONS, ROLES, DecryptoError, Episode, Turn
from cwm.text import clean

COLOURS = {"intercepted": "#c0392b", "miscommunicated": "#e67e22", "both": "#8e44ad", "survived": "#27ae60"}


def _pct(r: dict[str, Any]) -> str:
    if r.get("rate") is None:
        return "-"
    return f"{100 * r['rate']:.0f}% [{100 * r['low']:.0f}, {100 * r['high']:.0f}]"


def _mean(m: dict[str, Any]) -> str:
    if m.get("mean") is None:
        return "-"
    if m.get("low") is None:  # one keyword set: no interval
        return f"{m['mean']:.2f} [no interval: 1 keyword set]"
    return f"{m['mean']:.2f} [{m['low']:.2f}, {m['high']:.2f}]"


def csv_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per pairing: specs, then every rate with its interval."""
    flat = []
    for row in rows:
        s = row["summary"]
        out: dict[str, Any] = {r: row["pairing"][r] for r in ROLES} | {"episodes": s["episodes"],
                                                                     "keyword_sets": s["alice_bob_win"].get("clusters")}
        for c in END_CONDITIONS:
            out |= {c: s["end"][c]["rate"], f"{c}_low": s["end"][c]["low"], f"{c}_high": s["end"][c]["high"]}
        out |= {"turns": s["turns"]["mean"], "turns_low": s["turns"]["low"], "turns_high": s["turns"]["high"]}
        out |= {f"format_failures_{r}": s["format_failures"][r]["mean"] for r in ROLES}
        flat.append(out)
    return flat


def markdown(rows: Sequence[dict[str, Any]], record: dict[str, Any]) -> str:
    """The results table, the configurations played, the cross-play matrix of Alice/Bob survival (team rows,
    Eve columns) and, per Eve with several Alices and Bobs, the Alice x Bob matrix (self-play on the
    diagonal when both lists name the same agents, cross-play off it)."""
    lines = [f"# Decrypto: {record.get('episodes')} episodes x {record.get('seeds')} seeds per pairing", "",
             "95% intervals clustered by keyword set: every seed replays the same keyword sets, so the sample size "
             "is the number of keyword sets (`sets`), not of episodes.", "",
             "| Alice | Bob | Eve | sets | survived | intercepted | miscommunicated | both | turns |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        p, s = row["pairing"], row["summary"]
        ends = " | ".join(_pct(s["end"][c]) for c in ("survived", "intercepted", "miscommunicated", "both"))
        sets = s["alice_bob_win"].get("clusters", "-")
        lines.append(f"| {p['alice']} | {p['bob']} | {p['eve']} | {sets} | {ends} | {_mean(s['turns'])} |")
    lines += _configurations(rows)
    cell = {(r["pairing"]["alice"], r["pairing"]["bob"], r["pairing"]["eve"]): r["summary"] for r in rows}
    eves = list(dict.fromkeys(r["pairing"]["eve"] for r in rows))
    teams = list(dict.fromkeys((r["pairing"]["alice"], r["pairing"]["bob"]) for r in rows))
    if len(eves) > 1 or len(teams) > 1:
        lines += ["", "## Cross-play: Alice/Bob survival (rows: Alice + Bob; columns: Eve)", "",
                  "| Alice + Bob | " + " | ".join(eves) + " |", "|---|" + "---|" * len(eves)]
        for a, b in teams:
            vals = [_pct(cell[(a, b, e)]["alice_bob_win"]) if (a, b, e) in cell else "-" for e in eves]
            lines.append(f"| {a} + {b} | " + " | ".join(vals) + " |")
    for eve in eves:
        lines += _team_matrix(cell, eve)
    return "\n".join(lines) + "\n"


def _configurations(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per agent spec: whose configuration it is (the paper's, or cwm's own variant)."""
    lines = ["", "## Configurations", ""]
    for role in ROLES:
        for spec in dict.fromkeys(r["pairing"][role] for r in rows):
            try:
                lines.append(f"- {role} `{spec}`: {configuration(spec, role)}")
            except DecryptoError:
                lines.append(f"- {role} `{spec}`: (not a spec this version reads)")
    return lines


def _team_matrix(cell: dict[tuple[str, str, str], dict[str, Any]], eve: str) -> list[str]:
    alices = list(dict.fromkeys(a for a, _, e in cell if e == eve))
    bobs = list(dict.fromkeys(b for _, b, e in cell if e == eve))
    if len(alices) < 2 or len(bobs) < 2:
        return []
    lines = ["", f"## Alice x Bob survival against Eve {eve} (rows: Alice; columns: Bob)", "",
             "| Alice \\ Bob | " + " | ".join(bobs) + " |", "|---|" + "---|" * len(bobs)]
    for a in alices:
        vals = [_pct(cell[(a, b, eve)]["alice_bob_win"]) if (a, b, eve) in cell else "-" for b in bobs]
        lines.append(f"| {a} | " + " | ".join(vals) + " |")
    return lines


def write_results(out: Path, rows: Sequence[dict[str, Any]], record: dict[str, Any]) -> dict[str, Path]:
    """Writes results.json (record + rows), results.csv and results.md; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "results.json", "csv": out / "results.csv", "markdown": out / "results.md"}
    paths["json"].write_text(json.dumps({"record": record, "pairings": list(rows)}, indent=2) + "\n",
                             encoding="utf-8")
    flat = csv_rows(rows)
    with paths["csv"].open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(flat[0]) if flat else ["alice"])
        writer.writeheader()
        writer.writerows(flat)
    paths["markdown"].write_text(markdown(rows, record), encoding="utf-8")
    return paths


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _errors(values: Sequence[dict[str, Any]], key: str) -> tuple[list[float], list[list[float]]]:
    """Centres and error-bar lengths; a value with no interval gets no bar."""
    centre = [float(v[key] or 0) for v in values]
    low = [c if v["low"] is None else float(v["low"]) for c, v in zip(centre, values)]
    high = [c if v["high"] is None else float(v["high"]) for c, v in zip(centre, values)]
    return centre, [[c - lo for c, lo in zip(centre, low)], [hi - c for c, hi in zip(centre, high)]]


def plot_pairings(out: Path, rows: Sequence[dict[str, Any]]) -> list[Path]:
    """``win_turns.png`` (survival and mean turns per pairing, 95% intervals) and ``end_conditions.png``
    (stacked shares); one horizontal bar per pairing, so long specs stay readable."""
    plt = _pyplot()
    out.mkdir(parents=True, exist_ok=True)
    labels = [f"{r['pairing']['alice']} + {r['pairing']['bob']} vs {r['pairing']['eve']}" for r in rows]
    y = list(range(len(rows)))[::-1]
    height, label_width = 1.2 + 0.4 * len(rows), 0.08 * max(map(len, labels), default=0)  # inches
    fig, (left, right) = plt.subplots(1, 2, figsize=(8 + label_width, height), sharey=True)
    wins, err = _errors([r["summary"]["alice_bob_win"] for r in rows], "rate")
    left.barh(y, wins, xerr=err, color="#27ae60", capsize=3)
    left.set(xlim=(0, 1), xlabel="Alice/Bob survival", title="Survival rate")
    turns, err = _errors([r["summary"]["turns"] for r in rows], "mean")
    right.barh(y, turns, xerr=err, color="#2980b9", capsize=3)
    right.set(xlim=(0, 8.5), xlabel="turns played", title="Average turns")
    left.set_yticks(y, labels, fontsize=8)
    paths = [out / "win_turns.png", out / "end_conditions.png"]
    _save(plt, fig, paths[0])
    _save(plt, end_conditions_figure(rows), paths[1])
    return paths


def end_conditions_figure(rows: Sequence[dict[str, Any]]) -> Any:
    """The stacked shares of ``end_conditions.png``, one horizontal bar per pairing; the legend sits outside the
    axes (inside, it covered a bar whatever corner it took, since every bar spans the whole width)."""
    plt = _pyplot()
    labels = [f"{r['pairing']['alice']} + {r['pairing']['bob']} vs {r['pairing']['eve']}" for r in rows]
    y = list(range(len(rows)))[::-1]
    height, label_width = 1.2 + 0.4 * len(rows), 0.08 * max(map(len, labels), default=0)  # inches
    fig, ax = plt.subplots(figsize=(6.5 + label_width, max(height, 1.2 + 0.25 * len(END_CONDITIONS))))
    left_edge = [0.0] * len(rows)
    for c in END_CONDITIONS:
        share = [float(r["summary"]["end"][c]["rate"] or 0) for r in rows]
        ax.barh(y, share, left=left_edge, color=COLOURS[c], label=c)
        left_edge = [a + b for a, b in zip(left_edge, share)]
    ax.set(xlim=(0, 1), xlabel="share of episodes", title="End conditions")
    ax.set_yticks(y, labels, fontsize=8)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.tight_layout()  # makes room for the legend beside the axes
    return fig


def _save(plt: Any, fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sweep(path: Path, ks: Sequence[int], summaries: Sequence[dict[str, Any]]) -> Path:
    """End-condition rates against Alice's k (log scale), with 95% intervals: the trade-off in one plot."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for c in END_CONDITIONS:
        rates, err = _errors([s["end"][c] for s in summaries], "rate")
        ax.errorbar(list(ks), rates, yerr=err, marker="o", capsize=3, color=COLOURS[c], label=c)
    ax.set_xscale("log", base=2)
    ax.set(xlabel="Alice's k (candidate hints per keyword)", ylabel="share of episodes", ylim=(-0.02, 1.02),
           title="Embedding Alice/Bob vs embedding Eve: the k trade-off")
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    _save(plt, fig, path)
    return path


# ---------------------------------------------------------------------------------------------- viewer
STYLE = """
body { font-family: system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; background: #f4f5f7; }
section.episode { background: white; border-radius: 8px; padding: 1rem 1.5rem; margin-bottom: 2rem; }
.keywords { color: #555; } .keywords b { color: #111; }
.turn { border-top: 1px solid #ddd; padding: .6rem 0; }
.bubble { display: inline-block; border-radius: 14px; padding: .35rem .8rem; margin: .2rem 0; max-width: 80%; }
.row { display: flex; } .row.alice { justify-content: flex-start; } .row.bob, .row.eve { justify-content: flex-end; }
.alice .bubble { background: #dbeafe; } .bob .bubble { background: #dcfce7; } .eve .bubble { background: #fee2e2; }
.reveal { text-align: center; color: #333; font-size: .9rem; margin-top: .3rem; }
.end { font-weight: bold; }
"""


def _e(text: object) -> str:
    """A value as HTML text: cleaned (``cwm.text.clean``: control characters, line separators and bidi
    overrides made visible), then escaped, quotes too (it may be an attribute's value)."""
    return html.escape(clean(str(text), limit=None), quote=True)


def _code(code: object) -> str:
    """A code as the page shows it (``3-1-4``), escaped: an episode built in memory is not checked by type."""
    return _e(format_code(tuple(code)) if isinstance(code, (tuple, list)) else code)


def _turn(turn: Turn) -> str:
    marks = [m for m, on in (("interception", turn.intercepted), ("miscommunication", turn.miscommunicated)) if on]
    hints = ", ".join(f"<q>{_e(h)}</q>" for h in turn.hints)
    return (f'<div class="turn" data-turn="{_e(turn.number)}"><div class="label">Turn {_e(turn.number)}</div>'
            f'<div class="row alice"><span class="bubble hints">Alice: {hints}</span></div>'
            f'<div class="row bob"><span class="bubble guess">Bob guesses {_code(turn.bob_guess)}</span></div>'
            f'<div class="row eve"><span class="bubble guess">Eve guesses {_code(turn.eve_guess)}</span></div>'
            f'<div class="reveal">The code was <b class="code">{_code(turn.code)}</b>'
            f'{": " + " and ".join(marks) if marks else ""}</div></div>')


def _episode(episode: Episode) -> str:
    players = ", ".join(f"{_e(role)}: {_e(name)}" for role, name in episode.players.items())
    keywords = " ".join(f"<b>{i}. {_e(w)}</b>" for i, w in enumerate(episode.keywords, start=1))
    turns = "".join(_turn(t) for t in episode.turns)
    failures = ", ".join(f"{r} {n}" for r, n in episode.format_failures().items() if n) or "none"
    return (f'<section class="episode" id="{_e(episode.episode_id)}" data-end="{_e(episode.end)}">'
            f"<h2>{_e(episode.episode_id)}</h2><p>{players}</p>"
            f'<p class="keywords">Keywords: {keywords}</p>{turns}'
            f'<p class="end">End: {_e(episode.end)} after {len(episode.turns)} turns '
            f"(default moves: {_e(failures)})</p></section>")


def render_html(episodes: Sequence[Episode], *, title: str = "Decrypto transcripts") -> str:
    """The whole page for ``episodes``."""
    body = "".join(_episode(e) for e in episodes) or "<p>No episodes.</p>"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f"<style>{STYLE}</style></head><body><h1>{_e(title)}</h1>"
            f'<p class="count">{len(episodes)} episodes</p>{body}</body></html>\n')


def write_html(path: Path, episodes: Sequence[Episode], *, title: str = "Decrypto transcripts") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(episodes, title=title), encoding="utf-8")
    return path
