"""One static HTML page per tournament (``cwm view DIR``): the leaderboard, the results table, and every
match as a step-through view of the board (or each seat's observation) with the acting agent's record
(an LLM's reply and how it was read) beside each move. Boards are drawn as SVG by ``cwm.arena.boards``
(the renderer ``cwm serve`` uses; the game's text where it has no drawing); the arrow keys step the match
last clicked, a filter box shows the matches whose heading holds the text typed, and tables scroll in
their own box at phone width.

The page is self-contained: no script, style or font is loaded from anywhere, so it opens offline and
from a file. Everything an agent or a game wrote, and every file of the folder, is untrusted: the tables
are cleaned and HTML-escaped here, and the matches travel as JSON inside a ``<script
type="application/json">`` block (``embedded_json``: ASCII, ``<``, ``>`` and ``&`` written as JSON escapes
so no text can close the block, NaN and infinities as ``null`` so the page's script can parse it) that the
page's own script puts on screen through ``textContent`` only, never as markup. The folder is read as data
(``cwm.arena.replay``): nothing in it is imported, and no file it reads is changed; the page itself is the
one file ``cwm view DIR`` writes (``DIR/view.html`` unless ``--out`` names another path).
``page.html#m=3&s=5`` shows match 3 alone, at step 5 (matches are numbered from 1 in the order played, as
``cwm replay DIR`` lists them).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path

from cwm import games
from cwm.arena import boards, compare, teams
from cwm.arena import ratings as arena_ratings
from cwm.arena import replay as arena_replay
from cwm.arena import report as arena_report
from cwm.arena.types import MatchResult
from cwm.files import RUN_FILE_BYTES, InputLimitError, atomic_write, loads_bounded, read_bounded
from cwm.text import clean, clean_json
from cwm.types import JSON

REPLY_LIMIT = 4000  # characters of each LLM reply put in the page (the transcript keeps it whole)
VIEW_FILE = "view.html"

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #bbb;padding:2px 8px;text-align:left}
th{background:#eee}.match{border:1px solid #999;padding:.5em 1em;margin:1em 0}
.cols{display:flex;gap:1.5em;align-items:flex-start}.board{font-family:monospace;font-size:1.3em;
background:#f6f6f0;padding:.6em 1em;min-width:8em;white-space:pre}.notes{max-width:48em}
.notes pre{white-space:pre-wrap;background:#f4f4fb;padding:.4em;max-height:22em;overflow:auto}
.moves{font-family:monospace;font-size:.9em;max-width:60em}.moves span{cursor:pointer;padding:0 3px}
.moves span.now{background:#fd6;font-weight:bold}.scroll{overflow-x:auto;max-width:100%}
@media (max-width:600px){body{margin:.5em}.cols{flex-direction:column}.board{font-size:1em;min-width:0}
td,th{padding:1px 4px;font-size:.85em}}
"""

_SCRIPT = """
const matches = JSON.parse(document.getElementById('matches').textContent);
let current = 0;  // the match the arrow keys step
function show(m, s) {
  const t = matches[m], box = document.getElementById('match-' + m);
  s = Math.max(0, Math.min(s, t.steps.length)); box.dataset.step = s;
  const step = s > 0 ? t.steps[s - 1] : null;
  cwmShow(box.querySelector('.drawn'), box.querySelector('.board'), t.game, step ? step.state : t.initial);
  box.querySelector('.where').textContent = 'step ' + s + ' of ' + t.steps.length +
    (step ? ': ' + (step.player < 0 ? 'chance' : 'seat ' + step.player + ' (' + t.seats[step.player] + ')') +
     ' plays ' + step.text + (step.seconds != null ? ' in ' + step.seconds.toFixed(2) + ' s' : '') : ': start');
  const obs = box.querySelector('.obs'); obs.textContent = '';
  (step && step.observations || []).forEach((o, i) => { obs.textContent += 'seat ' + i + ' sees: ' + o + '\\n'; });
  const notes = box.querySelector('.notes'); notes.textContent = '';
  ((step && t.notes[s - 1]) || []).forEach(n => {
    const h = document.createElement('div');
    h.textContent = n.attempt !== undefined ? 'LLM attempt ' + n.attempt + ': ' + n.outcome + ' ' +
      JSON.stringify(n.parsed) + (Array.isArray(n.usage) ? ' (tokens ' + n.usage.join('/') + ')' : '') :
      Object.entries(n).map(([k, v]) => k + '=' + v).join(', ');
    notes.appendChild(h);
    if (n.reply) { const p = document.createElement('pre'); p.textContent = n.reply; notes.appendChild(p); }
  });
  box.querySelectorAll('.moves span').forEach((e, i) => e.className = i + 1 === s ? 'now' : '');
  box.querySelector('input[type=range]').value = s;
  current = m;
}
matches.forEach((t, m) => {
  const box = document.getElementById('match-' + m), moves = box.querySelector('.moves');
  t.steps.forEach((st, i) => { const e = document.createElement('span'); e.textContent = (i + 1) + '.' + st.text;
    e.onclick = () => show(m, i + 1); moves.appendChild(e); });
  box.onclick = () => { current = m; };
  const range = box.querySelector('input[type=range]'); range.max = t.steps.length;
  range.oninput = () => show(m, +range.value);
  box.querySelector('.prev').onclick = () => show(m, +box.dataset.step - 1);
  box.querySelector('.next').onclick = () => show(m, +box.dataset.step + 1);
  show(m, 0);
});
document.addEventListener('keydown', e => {  // arrows step the match last used, as prev/next do
  if (e.target.tagName === 'INPUT' && e.target.type !== 'range') return;
  const box = document.getElementById('match-' + current);
  if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
    e.preventDefault(); show(current, +box.dataset.step + (e.key === 'ArrowRight' ? 1 : -1)); }
});
document.getElementById('filter').oninput = e => {  // shows the matches whose heading or ending holds the text typed
  const words = e.target.value.toLowerCase().trim();
  document.querySelectorAll('.match').forEach(b => {
    const text = b.querySelector('h3').textContent.toLowerCase() + ' ' + b.querySelector('p').textContent.toLowerCase();
    b.hidden = !text.includes(words); });
};
const want = new URLSearchParams(location.hash.slice(1));
const linked = +want.get('m') - 1;  // numbered from 1, as `cwm replay DIR` lists them
if (want.has('m') && matches[linked]) {  // a link to one match: it alone is shown, at that step
  document.querySelectorAll('.match').forEach(e => { e.hidden = e.id !== 'match-' + linked; });
  document.getElementById('all').hidden = false;
  show(linked, +(want.get('s') || 0));
}
"""


def page(out_dir: Path, game: str | games.GameSpec | None = None) -> str:
    """The HTML page of the tournament in ``out_dir`` (its ``matches.jsonl``, transcripts and config), read
    as data: nothing in the folder is written or imported (``cwm.arena.replay``).

    Args:
      game: the game as the user names it (``--game``), to rebuild the transcripts of matches that have
        none; default the recorded game when it is a registered or OpenSpiel game
        (``cwm.arena.replay.folder_game``).

    Raises:
      ReplayError: no ``matches.jsonl``, or a match without a transcript and no usable game.
      TranscriptError, ArenaError: a damaged transcript or match row (names the file and the field or line).
    """
    results = arena_replay.results_of(out_dir)
    game_name = arena_replay.recorded_game(out_dir) or "?"
    transcripts = [for_page(arena_replay.load(out_dir, r, game)) | {"game": clean(game_name)} for r in results]
    sections = "\n".join(_match_html(i, t) for i, t in enumerate(transcripts))
    data = embedded_json(transcripts)
    title = html.escape(f"{clean(game_name)}: arena, {len(results)} matches")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<style>{_STYLE}{boards.STYLE}</style></head><body>\n<h1>{title}</h1>\n{_tables(out_dir, game, results)}"
            f"\n<h2>What was run</h2>\n{_agents(_described(out_dir))}\n<h2>Matches</h2>\n"
            f"<p><label>filter <input id=\"filter\" type=\"search\" placeholder=\"agent, key, forfeit\"></label>"
            f" (&larr; and &rarr; step the match last clicked)</p>"
            f"<p id=\"all\" hidden><a href=\"#\" onclick=\"location.hash='';location.reload()\">show every match</a></p>"
            f"\n{sections}\n"
            f"<script type=\"application/json\" id=\"matches\">{data}</script>\n"
            f"<script>{boards.SCRIPT}{_SCRIPT}</script>"
            f"\n</body></html>\n")


def write(out_dir: Path, path: Path | None = None, game: str | games.GameSpec | None = None) -> Path:
    """Writes ``page(out_dir, game)`` to ``path`` (default ``out_dir/view.html``) and returns where."""
    target = path or out_dir / VIEW_FILE
    atomic_write(target, page(out_dir, game))
    return target


def embedded_json(value: JSON) -> str:
    """``value`` as JSON that is safe inside a ``<script type="application/json">`` block: ASCII only (every
    other character, the line separators U+2028/U+2029 too, as a JSON escape), ``<``, ``>`` and ``&`` escaped
    as well (no text can close the block), and every NaN or infinity written as ``null`` (``JSON.parse``
    refuses them, and one would break the whole page)."""
    text = json.dumps(arena_report.finite_json(value), allow_nan=False, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def for_page(transcript: dict[str, JSON]) -> dict[str, JSON]:
    """What the page's script needs of a transcript: seat labels, states, steps, each step's notes (LLM
    replies cut to ``REPLY_LIMIT``, prompts left out: the transcript file has them)."""
    notes = arena_replay.agent_notes(transcript)
    kept = {i: [{k: v for k, v in n.items() if k != "prompt"} for n in found if isinstance(n, dict)]
            for i, found in notes.items()}
    seats = [s.get("label", "?") if isinstance(s, dict) else "?" for s in transcript.get("seats") or []]
    steps = [{k: s.get(k) for k in ("player", "text", "seconds", "state", "observations")} for s in transcript["steps"]]
    data = {"key": transcript["key"], "seats": seats, "initial": transcript["initial"], "steps": steps,
            "returns": transcript["returns"], "forfeit": transcript.get("forfeit"),
            "notes": {str(i): v for i, v in kept.items()}}
    return clean_json(data, limit=REPLY_LIMIT)


def _table(head: Sequence[str], body: Sequence[Sequence[object]]) -> str:
    cells = "".join(f"<th>{_text(h)}</th>" for h in head)
    lines = ["<tr>" + "".join(f"<td>{_text(c)}</td>" for c in row) + "</tr>" for row in body]
    return f"<div class=\"scroll\"><table><tr>{cells}</tr>{''.join(lines)}</table></div>"


def _text(value: object) -> str:
    """A value as HTML text: cleaned (``cwm.text.clean``: no control character, line separator or bidi
    override), then escaped."""
    return html.escape(clean(str(value)))


def _leaderboard(rows: Sequence[dict[str, JSON]]) -> str:
    head, body = arena_ratings.cells(rows)
    return _table(head, body)


def _results(rows: Sequence[dict[str, JSON]]) -> str:
    head = ["agent", "opponent", "n", "win [95% CI]", "draw", "loss", "mean payoff"]
    body = [[r["agent"], r["opponent"], r["matches"], f"{r['win_rate']:.2f} [{r['win_lo']:.2f}, {r['win_hi']:.2f}]",
             f"{r['draw_rate']:.2f}", f"{r['loss_rate']:.2f}", f"{r['mean_payoff']:+.3f}"] for r in rows]
    return _table(head, body)


def _tables(out_dir: Path, game: str | games.GameSpec | None, results: Sequence[MatchResult]) -> str:
    """The leaderboard, the results per pairing and the paired comparisons; for a cooperative game the team
    scores (``cwm.arena.teams``) instead, out of the game's best, beside its reference points."""
    spec = _known(out_dir, game)
    if spec is not None and teams.cooperative(spec):
        gt = games.load_game(spec)
        rows = teams.team_rows(results, max_score=float(gt.max_utility()), min_score=float(gt.min_utility()))
        head = ["team", "deals (matches)", "mean score [95% CI]"]
        body = [[r["team"], f"{r['deals']} ({r['matches']})", teams.score_cell(r)] for r in rows]
        reference = teams.reference_line(spec)
        return (f"<h2>Team scores</h2>\n{_table(head, body)}" +
                (f"<p>{_text(reference[0].upper() + reference[1:])}.</p>" if reference else ""))
    board = arena_ratings.leaderboard(results)
    rows = arena_report.pairings(arena_report.summarize(results))
    compared = arena_report.paired_comparisons(spec, results) if spec is not None else []
    return (f"<h2>Leaderboard</h2>\n{_leaderboard(board)}\n<h2>Results</h2>\n{_results(rows)}"
            f"\n<h2>Paired comparisons</h2>\n{_comparisons(compared)}")


def _known(out_dir: Path, game: str | games.GameSpec | None) -> games.GameSpec | None:
    """The folder's game when it is known here (a module game the folder names needs ``--game``: without it
    the page shows the matches, which carry their transcripts, and no comparison)."""
    try:
        return arena_replay.folder_game(out_dir, game)
    except arena_replay.ReplayError:
        return None


def _comparisons(rows: Sequence[dict[str, JSON]]) -> str:
    """Each pairing's paired comparison (``cwm.arena.compare``): n, interval, MDE and the verdict."""
    if not rows:
        return "<p>none: no seat-swapped pairs, or the game is not known here (pass --game)</p>"
    head = ["agent", "opponent", "matches (pairs)", "score" if rows[0]["outcome"] != "payoff" else "edge",
            "95% CI", "MDE (80% power)", "verdict"]
    body = [[r["agent"], r["opponent"], f"{r['matches']} ({r['pairs']})", compare.shown(r, float(r["mean"])),
             f"[{compare.shown(r, float(r['lo']))}, {compare.shown(r, float(r['hi']))}]",
             "-" if r["mde"] is None else "±" + compare.shown(r, float(r["mde"]), sign=False), r["verdict"]]
            for r in rows]
    return _table(head, body)


def _described(out_dir: Path) -> dict[str, str]:
    """What each agent was, as the tournament's ``results.json`` recorded it (read as data; a missing or
    damaged file, or a field of another shape, shows nothing)."""
    path = out_dir / "results.json"
    try:
        data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="results"), where=str(path)) \
            if path.is_file() else {}
    except (UnicodeDecodeError, json.JSONDecodeError, InputLimitError, RecursionError):
        return {}
    found = data.get("agent_settings") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _agents(described: dict[str, str]) -> str:
    if not described:
        return "<p>not recorded (this tournament's results.json holds no agent settings)</p>"
    return _table(["agent", "settings"], [[label, text] for label, text in described.items()])


def _match_html(i: int, t: dict[str, JSON]) -> str:
    seats = " vs ".join(str(s) for s in t["seats"])
    returns = " ".join(f"{x:+g}" for x in t["returns"])
    forfeit = t.get("forfeit")
    ending = f"returns {returns}" + (f"; forfeit ({forfeit.get('kind')}): {forfeit.get('reason')}"
                                     if isinstance(forfeit, dict) else "")
    return (f"<div class=\"match\" id=\"match-{i}\"><h3>{_text(t['key'])}: {_text(seats)}</h3>"
            f"<p>{_text(ending)}</p><button class=\"prev\">&larr; prev</button> "
            f"<input type=\"range\" min=\"0\" value=\"0\"> <button class=\"next\">next &rarr;</button> "
            f"<span class=\"where\"></span><div class=\"cols\"><div class=\"drawn\"></div><div class=\"board\"></div><div>"
            f"<pre class=\"obs\"></pre><div class=\"notes\"></div></div></div><p class=\"moves\"></p></div>")
