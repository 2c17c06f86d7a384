"""``cwm serve``: a local web app over a results folder or a bundle, built on the standard library's
``http.server`` (no framework: the app has a handful of JSON routes and one page, and adds no dependency).

The page shows the leaderboard and results of the folder, a filterable list of its matches, and a match's
step-through replay (boards drawn by ``cwm.arena.boards``, the renderer the static ``cwm view`` page uses;
the acting LLM's reply beside each move) loaded on demand, one match at a time; it polls the folder, so a
running tournament's matches appear as they finish. A person can play any agent spec in the browser: the
game runs in a thread of the server through ``cwm.arena.human.play_as`` (the arena's own ``run_match``, so
the agent is built and run where ``cwm play`` runs it: a ``cwm:`` model in its sandboxed worker, never
imported here), each move typed or clicked on the page is validated by ``HumanAgent`` (an illegal one gets
its explanation on the page), and the finished game is saved as a match like ``cwm play``'s.

Trust: the folder is untrusted data. Every field travels as JSON cleaned by ``cwm.text.clean_json`` and the
page puts it on screen through ``textContent`` only; responses carry a Content-Security-Policy that lets
only the page's own script (by nonce) run. Only the fixed routes below are served (no file is served by
path, so no path can reach outside the folder). The server binds to 127.0.0.1 unless ``--allow-remote``
(anyone who can reach it can start games and read the folder); requests whose ``Host`` is not the bound
address are refused (DNS rebinding), and a POST must carry ``X-CWM: 1`` (a form on another site cannot).

Routes: ``GET /`` (the page), ``GET /api/summary``, ``GET /api/match?n=N`` (numbered from 1, as
``cwm replay DIR`` lists them), ``GET /api/play?id=ID``, ``POST /api/play/start`` (``{"game", "agent",
"seat"}``), ``POST /api/play/move`` (``{"id", "move"}``).
"""

from __future__ import annotations

import gzip
import html
import ipaddress
import json
import queue
import re
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyspiel

from cwm import games
from cwm.agents.human import HumanAgent
from cwm.agents.specs import Settings
from cwm.arena import boards
from cwm.arena import human as arena_human
from cwm.arena import ratings as arena_ratings
from cwm.arena import replay as arena_replay
from cwm.arena import report as arena_report
from cwm.arena import view as arena_view
from cwm.arena.lock import DirectoryInUse, refuse_if_locked
from cwm.bundle.files import MANIFEST
from cwm.files import RUN_FILE_BYTES, InputLimitError, loads_bounded, read_bounded
from cwm.text import clean, clean_json
from cwm.types import JSON, CwmError
from planners.config import SearchConfig

BODY_LIMIT = 4096  # bytes of one POST body (a move or a game's settings)
MOVE_LIMIT = 200  # characters of one typed move
MESSAGES_KEPT = 200  # lines of a game's messages kept for the page


class ServeError(CwmError, ValueError):
    """A ``cwm serve`` setting that cannot be served (names the path or the host)."""


@dataclass(frozen=True)
class ServeSettings:
    """What ``cwm serve`` serves and how.

    Attributes:
      path: a results folder (``matches.jsonl``) or a bundle (``manifest.json``); ``None`` with ``game``: the
        folder the browser's games are saved in.
      host, port: where to listen (port 0: any free port).
      allow_remote: listen on a host other than a loopback address.
      game, agent, seat: the game, the agent spec and the person's seat the play form starts with.
      sims: the agent's MCTS/ISMCTS simulations per move.
      seed: seeds chance and the agent, with each match's key (as ``cwm play --seed``).
      play_out: where games played in the browser are saved (default ``runs/play/<game>``, as ``cwm play``).
    """

    path: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    allow_remote: bool = False
    game: str | None = None
    agent: str = "random"
    seat: int = 0
    sims: int = 200
    seed: int = 0
    play_out: Path | None = None


def check_host(host: str, allow_remote: bool) -> None:
    """Refuses a host that is not a loopback address unless ``allow_remote``.

    Raises:
      ServeError: naming the host and the flag.
    """
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not allow_remote:
        raise ServeError(f"--host {host} is not a loopback address: anyone who reaches it could read the folder "
                         f"and start games; pass --allow-remote to listen there anyway")


def folder_kind(path: Path | None) -> str:
    """``"results"``, ``"bundle"`` or ``"empty"`` (no path, or a folder that has no match yet).

    Raises:
      ServeError: a path that is not a directory.
    """
    if path is None:
        return "empty"
    if not path.is_dir():
        raise ServeError(f"{path}: not a directory (cwm serve takes a results folder or a bundle)")
    if (path / MANIFEST).is_file():
        return "bundle"
    return "results" if (path / "matches.jsonl").is_file() else "empty"


class BrowserPerson(HumanAgent):
    """A ``HumanAgent`` whose moves come from the page: ``read`` waits for the next move posted, ``write``
    keeps each message for the page, and each turn records what the person sees and may play."""

    def __init__(self, game: PlayGame):
        super().__init__(read=game.read, write=game.write)
        self.game = game

    def step(self, state: pyspiel.State) -> int:
        player = state.current_player()
        perfect = state.get_game().get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION
        seen = str(state) if perfect else state.observation_string(player)
        legal = [state.action_to_string(player, a) for a in state.legal_actions()]
        with self.game.lock:
            self.game.view, self.game.legal = clean(seen, limit=None, multiline=True), [clean(m) for m in legal]
        return super().step(state)


@dataclass
class PlayGame:
    """One game played in the browser: its moves in, its messages and result out (each under ``lock``)."""

    game: str
    agent: str
    seat: int
    moves: queue.Queue = field(default_factory=queue.Queue)
    lock: threading.Lock = field(default_factory=threading.Lock)
    status: str = "starting"  # starting | your-move | agent | over | error
    since: float = field(default_factory=time.monotonic)  # shown only: how long the agent has been thinking
    view: str = ""
    legal: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    result: dict[str, JSON] | None = None
    prompts: int = 0  # how many times the person was asked for a move (the page knows a new prompt by it)
    ready: threading.Event = field(default_factory=threading.Event)

    def read(self, prompt: str) -> str:
        with self.lock:
            self.status, self.prompts = "your-move", self.prompts + 1
        self.ready.set()
        move = self.moves.get()
        with self.lock:
            self.status, self.since = "agent", time.monotonic()
        return move

    def write(self, text: str) -> None:
        with self.lock:
            self.messages = (self.messages + [clean(str(text), limit=4000, multiline=True)])[-MESSAGES_KEPT:]

    def state(self) -> dict[str, JSON]:
        with self.lock:
            return clean_json({"game": self.game, "agent": self.agent, "seat": self.seat, "status": self.status,
                               "thinking_s": round(time.monotonic() - self.since, 1) if self.status == "agent"
                               else None, "view": self.view, "legal": list(self.legal),
                               "messages": list(self.messages), "result": self.result,
                               "prompts": self.prompts}, limit=None)


class Site:
    """What the routes answer: the folder's summary and matches, and the games played in the browser."""

    def __init__(self, settings: ServeSettings):
        self.settings = settings
        self.kind = folder_kind(settings.path)
        self.manifest = self._manifest() if self.kind == "bundle" else {}
        self.games: dict[str, PlayGame] = {}
        self.lock = threading.Lock()
        self._cached: tuple[Any, dict[str, JSON]] | None = None  # (folder and its files' stamps, tables)

    def _manifest(self) -> dict[str, JSON]:
        assert self.settings.path is not None
        file = self.settings.path / MANIFEST
        try:
            data = loads_bounded(read_bounded(file, RUN_FILE_BYTES, what="bundle manifest"), where=str(file))
        except (UnicodeDecodeError, json.JSONDecodeError, InputLimitError, RecursionError) as e:
            raise ServeError(f"{file}: not a readable manifest ({e})") from None
        if not isinstance(data, dict):
            raise ServeError(f"{file}: the manifest is not a JSON object")
        return clean_json(data, limit=2000)

    def folder(self) -> Path:
        """The results folder the page lists: the served one (a tournament may not have written its first
        match yet), or, for a bundle or no path, the folder the browser's games are saved in."""
        if self.settings.path is not None and self.kind != "bundle":
            return self.settings.path
        return self.play_out(self.default_game())

    def default_game(self) -> str:
        found = self.settings.game or (self.manifest.get("game") if self.kind == "bundle" else None)
        if found is None and self.kind == "results" and self.settings.path is not None:
            found = arena_replay.recorded_game(self.settings.path)
        return str(found or "tic_tac_toe")

    def default_agent(self) -> str:
        if self.kind == "bundle" and self.settings.agent == "random" and self.settings.path is not None:
            return f"cwm:{self.settings.path}"
        return self.settings.agent

    def play_out(self, game: str) -> Path:
        """Where a game played in the browser is saved: ``--out``, else ``runs/play/<game>`` as ``cwm play``
        does (never the served folder: a tournament's folder keeps its own matches and reports)."""
        if self.settings.play_out is not None:
            return self.settings.play_out
        if ".py" in game and game != self.settings.game:  # a bundle's recorded module: named, never imported
            return Path("runs") / "play" / re.sub(r"[^A-Za-z0-9_.-]+", "_", game.rsplit(":", 1)[-1])[:80]
        try:
            return Path("runs") / "play" / games.resolve(game).name
        except games.UnknownGameError as e:
            raise LookupError(str(e)) from None

    def summary(self) -> dict[str, JSON]:
        """The folder now: its game, matches (one line each), leaderboard, results, and whether a tournament is
        still writing it."""
        base: dict[str, JSON] = {"kind": self.kind, "play": {"game": self.default_game(),
                                 "agent": self.default_agent(), "seat": self.settings.seat},
                                 "games": [g.name for g in games.registered()], "manifest": self.manifest}
        out = self.folder()
        if not (out / "matches.jsonl").is_file():
            return clean_json(base | {"game": self.default_game(), "matches": [], "leaderboard": None,
                                      "results": [], "running": False}, limit=4000)
        return clean_json(base | self._tables(out) | {"running": _running(out)}, limit=4000)

    def _tables(self, out: Path) -> dict[str, JSON]:
        """The folder's matches, leaderboard and results, computed again only when one of the files they are
        read from changed (a page polls every 3 s; the leaderboard's intervals resample 200 times)."""
        stamp = tuple((f.stat().st_mtime_ns, f.stat().st_size) if f.is_file() else None
                      for f in (out / "matches.jsonl", out / "labels.json", out / "config.json"))
        with self.lock:
            if self._cached is not None and self._cached[0] == (out, stamp):
                return self._cached[1]
        results = arena_replay.results_of(out)
        head, body = arena_ratings.cells(arena_ratings.leaderboard(results)) if results else ([], [])
        rows = arena_report.pairings(arena_report.summarize(results)) if results else []
        listed = [{"n": i, "key": r.key, "seats": list(r.seats), "returns": list(r.returns),
                   "forfeit": r.reason if r.forfeit_seat is not None else None}
                  for i, r in enumerate(results, 1)]
        tables: dict[str, JSON] = {"game": arena_replay.recorded_game(out) or "?", "matches": listed,
                                   "leaderboard": {"head": list(head), "body": [list(map(str, b)) for b in body]},
                                   "results": rows}
        with self.lock:
            self._cached = ((out, stamp), tables)
        return tables

    def match(self, n: int) -> dict[str, JSON]:
        """Match ``n`` (from 1) of the folder, as the ``cwm view`` page holds it, with the game's name."""
        out = self.folder()
        if not (out / "matches.jsonl").is_file():
            raise LookupError("this folder has no matches")
        results = arena_replay.results_of(out)
        if not 1 <= n <= len(results):
            raise LookupError(f"no match {n} (the folder holds {len(results)})")
        game = self.settings.game if self.kind == "results" else None
        shown = arena_view.for_page(arena_replay.load(out, results[n - 1], game))
        return shown | {"game": clean(arena_replay.recorded_game(out) or "?")}

    def start(self, game: str, agent: str, seat: int) -> str:
        """Starts a game in the browser and returns its id (waits up to 3 s for its first turn or its error).

        Raises:
          ValueError: a game module (``path/to/game.py:NAME``) other than the one ``--play`` named: importing
            a module runs its code here, so only the command line may choose one (a folder's recorded game
            and the page's form are not trusted to).
        """
        if ".py" in game and game != self.settings.game:
            raise ValueError("a game module is played only when the command line names it (cwm serve --play "
                             "path/to/game.py:NAME)")
        playing = PlayGame(clean(game, limit=200), clean(agent, limit=2000), seat)
        gid = secrets.token_hex(8)
        with self.lock:
            self.games[gid] = playing
        threading.Thread(target=self._run, args=(playing,), daemon=True, name=f"cwm-serve-{gid}").start()
        playing.ready.wait(3)
        return gid

    def _run(self, playing: PlayGame) -> None:
        settings = Settings(search=SearchConfig(num_simulations=self.settings.sims))
        try:
            out = self.play_out(playing.game)
            result = arena_human.play_as(BrowserPerson(playing), playing.game, playing.agent, seat=playing.seat,
                                         out_dir=out, settings=settings, seed=self.settings.seed)
            transcript = arena_replay.load(out, result)
            steps = transcript["steps"]
            final = steps[-1]["state"] if isinstance(steps, list) and steps else transcript["initial"]
            mine, other = result.returns[playing.seat], result.returns[1 - playing.seat]
            verdict = "you won" if mine > other else ("you lost" if mine < other else "a draw")
            ended = {"verdict": verdict, "returns": list(result.returns), "key": result.key, "final": final,
                     "forfeit": result.reason if result.forfeit_seat is not None else None, "saved": str(out)}
            with playing.lock:
                playing.result, playing.status, playing.legal = clean_json(ended, limit=None), "over", []
        except Exception as e:  # shown on the page: a game or agent that cannot be played, a folder of another game
            with playing.lock:
                playing.status, playing.legal = "error", []
                playing.messages.append(clean(f"{type(e).__name__}: {e}", limit=2000))
        finally:
            playing.ready.set()

    def move(self, gid: str, move: str) -> None:
        playing = self.playing(gid)
        with playing.lock:
            if playing.status != "your-move":
                raise LookupError(f"it is not your move (the game is {playing.status})")
        playing.moves.put(move[:MOVE_LIMIT])

    def playing(self, gid: str) -> PlayGame:
        with self.lock:
            found = self.games.get(gid)
        if found is None:
            raise LookupError("no such game (the server may have restarted: start a new one)")
        return found


def _running(out: Path) -> bool:
    """Whether another process holds ``out``'s writer lock now (a tournament still playing into it)."""
    try:
        refuse_if_locked(out)
    except DirectoryInUse:
        return True
    return False


class Handler(BaseHTTPRequestHandler):
    """The routes (module docstring); ``server.site`` answers them."""

    server_version = "cwm-serve"
    site: Site
    allowed_hosts: frozenset[str]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        return  # quiet: the terminal shows the address, not every poll

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        try:
            if url.path == "/favicon.ico":
                return self._send(204, b"", "image/x-icon", None)
            if url.path == "/":
                return self._page()
            if url.path == "/api/summary":
                return self._json(200, self.site.summary())
            if url.path == "/api/match":
                return self._json(200, self.site.match(int(query.get("n", ["0"])[0])))
            if url.path == "/api/play":
                return self._json(200, self.site.playing(query.get("id", [""])[0]).state())
        except (LookupError, ValueError) as e:
            return self._json(404, {"error": clean(str(e), limit=500)})
        self._json(404, {"error": "no such page"})

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        if not self._host_ok():
            return
        if self.headers.get("X-CWM") != "1":
            return self._json(403, {"error": "a request from the cwm page carries X-CWM: 1"})
        try:
            body = self._body()
            if self.path == "/api/play/start":
                seat = body.get("seat", 0)
                if seat not in (0, 1):
                    raise ValueError("seat must be 0 or 1")
                gid = self.site.start(str(body.get("game", "")), str(body.get("agent", "")), int(seat))
                return self._json(200, {"id": gid} | self.site.playing(gid).state())
            if self.path == "/api/play/move":
                self.site.move(str(body.get("id", "")), str(body.get("move", "")))
                return self._json(200, {"ok": True})
        except (LookupError, ValueError) as e:
            return self._json(400, {"error": clean(str(e), limit=500)})
        self._json(404, {"error": "no such page"})

    def _body(self) -> dict[str, Any]:
        size = int(self.headers.get("Content-Length") or 0)
        if not 0 <= size <= BODY_LIMIT:
            raise ValueError(f"request body over {BODY_LIMIT} bytes")
        try:
            data = json.loads(self.rfile.read(size) or b"{}")
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise ValueError("the request body is not JSON") from None
        if not isinstance(data, dict):
            raise ValueError("the request body is not a JSON object")
        return data

    def _host_ok(self) -> bool:
        if self.headers.get("Host", "") in self.allowed_hosts:
            return True
        self._json(421, {"error": "this server answers only at its own address"})
        return False

    def _page(self) -> None:
        nonce = secrets.token_urlsafe(16)
        self._send(200, page(nonce).encode(), "text/html; charset=utf-8", nonce)

    def _json(self, code: int, value: JSON) -> None:
        self._send(code, arena_view.embedded_json(value).encode(), "application/json", None)

    def _send(self, code: int, body: bytes, kind: str, nonce: str | None) -> None:
        self.send_response(code)
        if len(body) > 1024 and "gzip" in self.headers.get("Accept-Encoding", ""):
            body = gzip.compress(body, compresslevel=6)  # a match's states repeat: a tenth of the bytes travel
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        script = f"'nonce-{nonce}'" if nonce else "'none'"
        self.send_header("Content-Security-Policy", f"default-src 'none'; script-src {script}; style-src "
                         f"'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'")
        self.end_headers()
        self.wfile.write(body)


def make_server(settings: ServeSettings) -> ThreadingHTTPServer:
    """The server, bound and ready (``serve_forever`` runs it); ``settings.port`` 0 picks a free port.

    Raises:
      ServeError: a host that is not loopback without ``allow_remote``, or a path that cannot be served.
    """
    check_host(settings.host, settings.allow_remote)
    site = Site(settings)
    kind = _Server6 if ":" in settings.host else ThreadingHTTPServer
    server = kind((settings.host, settings.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    hosts = {f"{settings.host}:{port}", f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    handler = type("SiteHandler", (Handler,), {"site": site, "allowed_hosts": frozenset(hosts)})
    server.RequestHandlerClass = handler
    return server


def url_of(server: ThreadingHTTPServer) -> str:
    """The address the server answers at (an IPv6 host in brackets)."""
    host, port = server.server_address[:2]
    name = host.decode() if isinstance(host, bytes) else str(host)
    return f"http://[{name}]:{port}/" if ":" in name else f"http://{name}:{port}/"


class _Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def page(nonce: str) -> str:
    """The app's one page: its data comes from the JSON routes, its script runs under ``nonce``."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>cwm serve</title>"
            f"<style>{_STYLE}{boards.STYLE}</style></head><body>{_BODY}"
            f"<script nonce=\"{html.escape(nonce)}\">{boards.SCRIPT}{_SCRIPT}</script></body></html>\n")


_STYLE = """
body{font-family:system-ui,sans-serif;margin:1em;color:#222;max-width:72em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 6px;text-align:left}
th{background:#eee}.scroll{overflow-x:auto;max-width:100%}section{margin:1em 0}
.cols{display:flex;gap:1em;flex-wrap:wrap;align-items:flex-start}.cols>div{min-width:0;max-width:100%}
pre:empty{display:none}pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f0;padding:.4em;max-width:100%;overflow:auto}
.notes pre{background:#f4f4fb;max-height:20em}#matchlist tr{cursor:pointer}#matchlist tr.now{background:#fd6}
#legal button{margin:2px;font-family:monospace}.status{font-weight:bold}input,select,button{font-size:1em}
input[type=text],input[type=search]{max-width:100%}
@media (max-width:600px){body{margin:.4em}td,th{padding:1px 3px;font-size:.8em}h1{font-size:1.3em}}
"""

_BODY = """
<h1 id="title">cwm serve</h1><p id="progress"></p>
<section id="play"><h2>Play</h2>
<p><label>game <input id="pgame" type="text" list="gamelist" size="16"></label> <datalist id="gamelist"></datalist>
<label>against <input id="pagent" type="text" size="18"></label>
<label>seat <select id="pseat"><option>0</option><option>1</option></select></label>
<button id="pstart">start a game</button></p>
<p class="status" id="pstatus"></p><div class="cols"><div><div class="drawn" id="pdrawn"></div>
<pre id="pboard"></pre></div><div><div id="legal"></div>
<p><input id="pmove" type="text" size="14" placeholder="a move, or ?"> <button id="psend">play</button>
<button id="pquit">resign</button></p><pre id="preply"></pre></div></div></section>
<section id="bundle" hidden><h2>Bundle</h2><div class="scroll" id="manifest"></div></section>
<section><h2>Leaderboard</h2><div class="scroll" id="leaderboard"></div>
<h2>Results</h2><div class="scroll" id="results"></div></section>
<section><h2>Matches</h2><p><label>filter <input id="filter" type="search" placeholder="agent, key, forfeit">
</label> (&larr; &rarr; step the open match)</p><div class="scroll"><table id="matchlist"></table></div></section>
<section id="viewer" hidden><h2 id="vtitle"></h2><p id="vending"></p>
<button id="prev">&larr; prev</button> <input id="range" type="range" min="0" value="0">
<button id="next">next &rarr;</button> <span id="where"></span>
<div class="cols"><div><div class="drawn" id="vdrawn"></div><pre id="vboard"></pre></div>
<div><div id="vobs" class="cols"></div><div class="notes" id="vnotes"></div></div></div></section>
"""

_SCRIPT = """
const $ = id => document.getElementById(id);
function el(tag, text) { const e = document.createElement(tag); if (text != null) e.textContent = String(text); return e; }
function table(holder, head, rows, onrow) {
  holder.textContent = ''; const t = holder.tagName === 'TABLE' ? holder : holder.appendChild(el('table'));
  const h = t.appendChild(el('tr')); head.forEach(c => h.appendChild(el('th', c)));
  rows.forEach((r, i) => { const tr = t.appendChild(el('tr')); r.forEach(c => tr.appendChild(el('td', c)));
    if (onrow) { tr.onclick = () => onrow(i); tr.dataset.row = i; } });
}
async function getJson(url, body) {
  const r = await fetch(url, body === undefined ? {} : {method: 'POST', body: JSON.stringify(body),
    headers: {'Content-Type': 'application/json', 'X-CWM': '1'}});
  const data = await r.json(); if (!r.ok) throw new Error(data.error || r.status); return data;
}
let summary = null, open = null, step = 0, filled = false;
let listed = '';  // what the list shows now: it is rebuilt only when that changes
function listMatches() {
  if (!summary) return;
  const now = JSON.stringify([summary.matches, $('filter').value, open && open.n]);
  if (now === listed) return;
  listed = now;
  const words = $('filter').value.toLowerCase().trim();
  const shown = summary.matches.filter(m => { const text = [m.n, m.key, m.seats.join(' vs '), m.forfeit || '']
    .join(' ').toLowerCase(); return text.includes(words); });
  table($('matchlist'), ['#', 'seats', 'returns', 'forfeit'], shown.map(m => [m.n, m.seats.join(' vs '),
    m.returns.map(x => (x > 0 ? '+' : '') + x).join(' '), m.forfeit || '']), i => openMatch(shown[i].n));
  $('matchlist').querySelectorAll('tr[data-row]').forEach(tr => {
    tr.className = open && shown[+tr.dataset.row].n === open.n ? 'now' : ''; });
}
async function refresh() {
  try { summary = await getJson('/api/summary'); } catch (e) { $('progress').textContent = 'cannot read: ' + e.message; return; }
  $('title').textContent = summary.game + ': ' + summary.matches.length + ' matches';
  $('progress').textContent = summary.running ? 'a tournament is playing into this folder: its matches appear ' +
    'here as they finish' : '';
  if (summary.leaderboard) table($('leaderboard'), summary.leaderboard.head, summary.leaderboard.body);
  else $('leaderboard').textContent = 'no match yet';
  table($('results'), ['agent', 'opponent', 'n', 'win', 'draw', 'loss', 'mean payoff'], summary.results.map(r =>
    [r.agent, r.opponent, r.matches, (+r.win_rate).toFixed(2), (+r.draw_rate).toFixed(2), (+r.loss_rate).toFixed(2),
     (+r.mean_payoff).toFixed(3)]));
  if (summary.kind === 'bundle') { $('bundle').hidden = false;
    table($('manifest'), ['field', 'value'], Object.entries(summary.manifest).map(([k, v]) =>
      [k, typeof v === 'string' ? v : JSON.stringify(v)])); }
  if (!filled) { filled = true; $('pgame').value = summary.play.game; $('pagent').value = summary.play.agent;
    $('pseat').value = summary.play.seat; summary.games.forEach(g => { const o = el('option'); o.value = g;
      $('gamelist').appendChild(o); }); }
  listMatches();
}
async function openMatch(n) {
  try { open = await getJson('/api/match?n=' + n); } catch (e) { $('where').textContent = e.message; return; }
  open.n = n; $('viewer').hidden = false; $('range').max = open.steps.length;
  $('vtitle').textContent = 'match ' + n + ': ' + open.seats.join(' vs ');
  $('vending').textContent = 'returns ' + open.returns.join(' ') + (open.forfeit ? '; forfeit (' +
    open.forfeit.kind + '): ' + open.forfeit.reason : '');
  showStep(0); listMatches();
}
function showStep(s) {
  if (!open) return; const t = open;
  s = Math.max(0, Math.min(s, t.steps.length)); step = s; $('range').value = s;
  const st = s > 0 ? t.steps[s - 1] : null;
  cwmShow($('vdrawn'), $('vboard'), t.game, st ? st.state : t.initial);
  $('where').textContent = 'step ' + s + ' of ' + t.steps.length + (st ? ': ' + (st.player < 0 ? 'chance' :
    'seat ' + st.player + ' (' + t.seats[st.player] + ')') + ' plays ' + st.text : ': start');
  const obs = $('vobs'); obs.textContent = '';  // each seat's observation, drawn where the game has a drawing
  (st && st.observations || []).forEach((o, i) => { const box = obs.appendChild(el('div'));
    box.appendChild(el('div', 'seat ' + i + ' sees:')); const d = box.appendChild(el('div')); d.className = 'drawn';
    cwmShow(d, box.appendChild(el('pre')), t.game, o); });
  const notes = $('vnotes'); notes.textContent = '';
  ((st && t.notes[s - 1]) || []).forEach(n => {
    notes.appendChild(el('div', n.attempt !== undefined ? 'LLM attempt ' + n.attempt + ': ' + n.outcome + ' ' +
      JSON.stringify(n.parsed) : Object.entries(n).map(([k, v]) => k + '=' + JSON.stringify(v)).join(', ')));
    if (n.reply) notes.appendChild(el('pre', n.reply));
  });
}
$('prev').onclick = () => showStep(step - 1); $('next').onclick = () => showStep(step + 1);
$('range').oninput = () => showStep(+$('range').value); $('filter').oninput = listMatches;
document.addEventListener('keydown', e => {
  if (e.target.tagName === 'INPUT' && e.target.type !== 'range') return;
  if (e.key === 'ArrowRight') { e.preventDefault(); showStep(step + 1); }
  if (e.key === 'ArrowLeft') { e.preventDefault(); showStep(step - 1); }
});
let playId = null, seenMessages = 0, polling = null;
function showPlay(g) {
  const over = g.status === 'over';
  cwmShow($('pdrawn'), $('pboard'), g.game, over ? g.result.final : g.view);
  $('pstatus').textContent = g.status === 'your-move' ? 'your move (seat ' + g.seat + ')' : g.status === 'agent' ?
    g.agent + ' is thinking (' + g.thinking_s + ' s)' : over ? 'game over: ' + g.result.verdict +
    (g.result.forfeit ? ' (' + g.result.forfeit + ')' : '') + '; returns ' + g.result.returns.join(' ') +
    '; saved as ' + g.result.key + ' in ' + g.result.saved : g.status === 'error' ? 'cannot play: ' +
    g.messages[g.messages.length - 1] : 'starting';
  $('pstatus').dataset.prompts = g.prompts;
  const legal = $('legal'), offer = JSON.stringify([playId, g.status, g.prompts, g.legal]);
  if (legal.dataset.offer !== offer) {  // rebuilt only when the offer changes: a click is never lost to a poll
    legal.dataset.offer = offer; legal.textContent = '';
    if (g.status === 'your-move') g.legal.forEach(m => { const b = legal.appendChild(el('button', m));
      b.onclick = () => send(m); });
  }
  if (g.messages.length > seenMessages) $('preply').textContent = g.messages.slice(seenMessages).join('\\n');
  if (over || g.status === 'error') { clearInterval(polling); polling = null; refresh(); }
}
async function poll() { if (playId) try { showPlay(await getJson('/api/play?id=' + playId)); } catch (e) {
  $('pstatus').textContent = e.message; } }
async function send(move) {
  if (!playId) return;
  seenMessages = (await getJson('/api/play?id=' + playId)).messages.length;
  try { await getJson('/api/play/move', {id: playId, move: move}); } catch (e) { $('preply').textContent = e.message; }
  $('pmove').value = ''; setTimeout(poll, 150);
}
$('pstart').onclick = async () => {
  try { const g = await getJson('/api/play/start', {game: $('pgame').value, agent: $('pagent').value,
    seat: +$('pseat').value}); playId = g.id; seenMessages = 0; $('preply').textContent = ''; showPlay(g); }
  catch (e) { $('pstatus').textContent = 'cannot start: ' + e.message; return; }
  if (!polling) polling = setInterval(poll, 400);
};
$('psend').onclick = () => send($('pmove').value);
$('pmove').onkeydown = e => { if (e.key === 'Enter') send($('pmove').value); };
$('pquit').onclick = () => send('quit');
refresh(); setInterval(refresh, 3000);
"""
