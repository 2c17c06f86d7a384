"""A static HTML viewer of Decrypto transcripts: one self-contained page, chat-like, per turn the hints, both
guesses and the reveal. Every text from a transcript is escaped, so a hostile hint shows as text."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from cwm.decrypto.engine import format_code
from cwm.decrypto.types import Episode, Turn

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
    return html.escape(str(text), quote=True)


def _turn(turn: Turn) -> str:
    marks = [m for m, on in (("interception", turn.intercepted), ("miscommunication", turn.miscommunicated)) if on]
    hints = ", ".join(f"<q>{_e(h)}</q>" for h in turn.hints)
    return (f'<div class="turn" data-turn="{turn.number}"><div class="label">Turn {turn.number}</div>'
            f'<div class="row alice"><span class="bubble hints">Alice: {hints}</span></div>'
            f'<div class="row bob"><span class="bubble guess">Bob guesses {format_code(turn.bob_guess)}</span></div>'
            f'<div class="row eve"><span class="bubble guess">Eve guesses {format_code(turn.eve_guess)}</span></div>'
            f'<div class="reveal">The code was <b class="code">{format_code(turn.code)}</b>'
            f'{": " + " and ".join(marks) if marks else ""}</div></div>')


def _episode(episode: Episode) -> str:
    players = ", ".join(f"{role}: {_e(name)}" for role, name in episode.players.items())
    keywords = " ".join(f"<b>{i}. {_e(w)}</b>" for i, w in enumerate(episode.keywords, start=1))
    turns = "".join(_turn(t) for t in episode.turns)
    failures = ", ".join(f"{r} {n}" for r, n in episode.format_failures().items() if n) or "none"
    return (f'<section class="episode" id="{_e(episode.episode_id)}" data-end="{_e(episode.end)}">'
            f"<h2>{_e(episode.episode_id)}</h2><p>{players}</p>"
            f'<p class="keywords">Keywords: {keywords}</p>{turns}'
            f'<p class="end">End: {_e(episode.end)} after {len(episode.turns)} turns '
            f"(default moves: {failures})</p></section>")


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
