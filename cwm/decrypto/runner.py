"""The evaluation runner: episodes x seeds per pairing of agents to roles, resumable, for cross-play.

Episode ``e`` of seed ``s`` plays game seed ``e`` (the same 32 keyword sets for every pairing and seed, as
the published benchmark repeats its environments across model seeds) with agent seed ``s * 1000003 + e``.
Each finished episode is appended to ``episodes/<pairing>.jsonl`` at once, so an interrupted run, started
again into the same directory, plays only the episodes still missing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from cwm.decrypto.play import EpisodeSettings, play_episode
from cwm.decrypto.types import DecryptoError, Episode
from cwm.files import RECORDS_BYTES, loads_bounded, read_bounded

AGENT_SEED_STRIDE = 1000003


@dataclasses.dataclass(frozen=True)
class Pairing:
    """One assignment of agent specs to the three roles."""

    alice: str
    bob: str
    eve: str

    @property
    def slug(self) -> str:
        """A file-name-safe label: ``embed__embed__llm-gemini``; a spec over 40 characters (a replay file's
        path) is cut to 31 and ends in 8 hex digits of its hash, so the name stays short and unique."""
        return "__".join(_slug_part(s) for s in (self.alice, self.bob, self.eve))

    def to_json(self) -> dict[str, str]:
        return dataclasses.asdict(self)


def _slug_part(spec: str) -> str:
    part = re.sub(r"[^A-Za-z0-9_.=-]+", "-", spec).strip("-")
    if len(part) <= 40:
        return part
    return f"{part[:31]}-{hashlib.sha256(spec.encode('utf-8')).hexdigest()[:8]}"


def cross_play(alices: Sequence[str], bobs: Sequence[str], eves: Sequence[str], *,
               matched: bool = False) -> list[Pairing]:
    """Every pairing with roles fixed: all Alice x Bob x Eve; ``matched``: Alice and Bob the same spec
    (``alices`` and ``bobs`` are read in step and must be as long as each other)."""
    if matched:
        if len(alices) != len(bobs):
            raise DecryptoError(f"matched teams need as many Alice as Bob specs, got {len(alices)} and {len(bobs)}")
        teams = list(zip(alices, bobs))
    else:
        teams = [(a, b) for a in alices for b in bobs]
    return [Pairing(a, b, e) for a, b in teams for e in eves]


def plan(episodes: int, seeds: int) -> list[tuple[str, int, int]]:
    """``(label, game seed, agent seed)`` per episode: seeds outermost."""
    return [(f"s{s}/e{e}", e, s * AGENT_SEED_STRIDE + e) for s in range(seeds) for e in range(episodes)]


def read_episodes(path: Path) -> list[Episode]:
    """The episodes of a JSONL file (none if it does not exist).

    A last line cut short (a run killed mid-write) is dropped; any other bad line raises.

    Raises:
      DecryptoError: a line that is not an episode, or over a bound (names the file and line).
      InputLimitError: the file is over its bound.
    """
    if not path.exists():
        return []
    try:
        lines = read_bounded(path, RECORDS_BYTES, what="Decrypto episodes").decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise DecryptoError(f"{path}: not UTF-8 text (byte {e.start})") from None
    episodes = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            episodes.append(Episode.from_json(loads_bounded(line, where=f"{path}:{number}")))
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            if number == len(lines) and not line.rstrip().endswith("}"):
                break  # an interrupted append
            why = str(e) if isinstance(e, DecryptoError) else f"{type(e).__name__}: {e}"
            raise DecryptoError(f"{path}:{number}: not a Decrypto episode ({why})") from None
    return episodes


def _rewrite(path: Path, episodes: Iterable[Episode]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e.to_json()) + "\n" for e in episodes), encoding="utf-8")


def run_pairing(pairing: Pairing, agents: Callable[[Pairing], tuple[Any, Any, Any]], out: Path, *,
                episodes: int = 32, seeds: int = 3, probes: bool = False, progress: bool = True,
                on_episode: Callable[[Episode], None] | None = None) -> list[Episode]:
    """Plays (or resumes) one pairing's episodes and returns them all, in plan order.

    Args:
      pairing: the specs per role.
      agents: builds the three agents for a pairing (called once, only if an episode is missing).
      out: the run directory; episodes go to ``out/episodes/<slug>.jsonl``.
      episodes, seeds: episodes per seed (default 32) and seeds (default 3).
      probes: ask the theory-of-mind questions.
      progress: a progress bar on stderr.
      on_episode: called with each newly finished episode.
    """
    path = out / "episodes" / f"{pairing.slug}.jsonl"
    wanted = plan(episodes, seeds)
    ids = {f"{pairing.slug}/{label}" for label, _, _ in wanted}
    done = {e.episode_id: e for e in read_episodes(path) if e.episode_id in ids}
    _rewrite(path, done.values())  # drops a torn last line and episodes outside this plan
    missing = [w for w in wanted if f"{pairing.slug}/{w[0]}" not in done]
    if missing:
        alice, bob, eve = agents(pairing)
        bar = tqdm(missing, desc=pairing.slug, unit="episode", disable=not progress, leave=True)
        with path.open("a", encoding="utf-8") as f:
            for label, game_seed, agent_seed in bar:
                settings = EpisodeSettings(agent_seed=agent_seed, episode_id=f"{pairing.slug}/{label}", probes=probes)
                episode = play_episode(alice, bob, eve, game_seed=game_seed, settings=settings)
                f.write(json.dumps(episode.to_json()) + "\n")
                f.flush()
                done[episode.episode_id] = episode
                bar.set_postfix_str(f"{episode.end} in {len(episode.turns)}")
                if on_episode is not None:
                    on_episode(episode)
    return [done[f"{pairing.slug}/{label}"] for label, _, _ in wanted]
