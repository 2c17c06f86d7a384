"""``cwm run``'s twin stages: a fast twin of the run's model for the arena's planners, and PPO trained on a JAX
twin of it, both from the real sessions shipped with cwm (``cwm/data/recordings/twins/``).

A shipped session asked for a twin of one model: the model the game's shipped world-model session writes (its
SHA-256 in the session's provenance). A run whose model is that one replays the session; any other run (a live
LLM, another seed or rules tier) skips the stage, saying why, unless asked (``--twins on``, a live LLM: the
run's own LLM writes the fast twin). Each stage writes its record (``twin.json``, ``ppo.json``) once it is
done, so a resumed run does not redo it; the synthesis inside resumes without repeating a call, and PPO
continues from its checkpoints.

Folder ``twins/``: ``GAME.fast.jsonl`` (the fast twin, with the model's CPU profile it was shown,
``GAME.profile.json``), ``GAME.jax.jsonl`` (a JAX twin without an encoder), ``GAME.ppo.jsonl`` (an observation
encoder, then a JAX twin checked against it), each with ``GAME.<kind>.provenance.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from cwm import games
from cwm.arena import cost
from cwm.files import RUN_FILE_BYTES, atomic_write, loads_bounded, read_bounded, read_text
from cwm.llm import Client, ReplayMissError, make_client
from cwm.sandbox.equivalence import DEFAULT_EQUIVALENCE, EquivalenceSettings, playout_checked, profile_model
from cwm.synthesis import SynthesisSettings, synthesize_fast
from cwm.types import JSON

TWINS = ("auto", "on", "off")  # --twins: by the check's cost (auto), always, never
AUTO_CHECK_CPU_S = 900.0  # a fast twin whose check is projected above this runs only when asked (--twins on)
OVERHEAD = 4.0  # the check's CPU per unit of the profile's: the state wrapper, the children, the comparison
TWIN_BUDGET = 5  # LLM calls of a twin or encoder synthesis (the shipped sessions answered at the first)
TWIN_RECORD = "twin.json"


@dataclasses.dataclass(frozen=True)
class StageInput:
    """What a twin stage needs of the run: its game, bundle, directory, LLM spec, settings and whether to
    draw progress bars."""

    spec: games.GameSpec
    bundle_dir: Path
    out: Path
    llm_spec: str
    config: Any
    progress: bool


def session(game: str, kind: str) -> Path | None:
    """The shipped session of ``kind`` (``fast``, ``jax``, ``ppo``) for a registered game, if one ships."""
    try:
        name = games.resolve(game).name
    except games.UnknownGameError:
        return None
    resource = resources.files("cwm").joinpath("data", "recordings", "twins", f"{name}.{kind}.jsonl")
    return Path(str(resource)) if resource.is_file() else None


def provenance(recording: Path) -> dict[str, Any]:
    """A twin session's provenance (``GAME.<kind>.provenance.json``; ``{}`` when it has none)."""
    path = recording.with_name(recording.name.removesuffix(".jsonl") + ".provenance.json")
    if not path.is_file():
        return {}
    data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="provenance file"), where=str(path))
    return data if isinstance(data, dict) else {}


def equivalence_of(recorded: dict[str, Any]) -> EquivalenceSettings:
    """The equivalence bound a session was accepted under (its provenance's ``equivalence``; else the default)."""
    fields = {k: v for k, v in (recorded.get("equivalence") or {}).items()
              if k in ("p", "delta", "simulations", "playouts_per_child")}
    return dataclasses.replace(DEFAULT_EQUIVALENCE, **fields)


def check_cpu_s(profile: dict[str, Any], settings: EquivalenceSettings) -> float:
    """The projected CPU seconds of a twin's equivalence check, from the model's profile: the model's CPU per
    random playout (the profile's, times ``OVERHEAD``), for each kind's playouts; an MCTS-guided playout costs
    about ``simulations`` rollouts of half a game at each of its moves; the twin counted at the model's cost."""
    playouts = max(1, int(profile.get("playouts") or 1))
    # the model's functions only: the library's work (its freezing too, where the profile times it) is in OVERHEAD
    per_playout = OVERHEAD * sum(float(v) for v in profile["cpu_s"].values()) / playouts
    moves = int(profile.get("states") or 0) / playouts
    guided = per_playout * (1 + settings.simulations * moves / 2)
    return 2 * settings.playouts * (per_playout + guided)


def model_sha(bundle_dir: Path) -> str:
    return hashlib.sha256(read_text(bundle_dir / "model.py", what="bundle file").encode()).hexdigest()


def done(path: Path, sha: str) -> dict[str, JSON] | None:
    """A stage's record from an earlier run of this model, or ``None`` (none, damaged, or another model's)."""
    try:
        old = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="stage record"), where=str(path))
    except (OSError, ValueError):
        return None
    return old if isinstance(old, dict) and old.get("model_sha256") == sha else None


def skipped(why: str, **extra: JSON) -> dict[str, JSON]:
    return {"status": "skipped", "reason": why, **extra}


def said(record: dict[str, JSON], what: str) -> None:
    """Names a stage skipped for a reason the user did not give (a flag that turned it off goes unsaid) on
    stderr, once: when it is decided, not when a resumed run reads its record."""
    if record.get("status") == "skipped" and not str(record.get("reason")).startswith("turned off"):
        print(f"{what} stage skipped: {record['reason']}", file=sys.stderr)


def _missed(request: Any) -> str:
    return f"it holds no reply to today's request {getattr(request, 'tag', '')!r}"


class _Misses:
    """A client that counts the requests its replay file did not hold (a session that no longer replays)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.misses: list[str] = []

    def complete(self, request: Any) -> Any:
        try:
            return self.client.complete(request)
        except ReplayMissError:
            self.misses.append(_missed(request))
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


def recorded_stage(stage: StageInput, name: str, what: str,
                   decide: Callable[[StageInput, str], dict[str, JSON]]) -> dict[str, JSON]:
    """A stage's record (``name`` in the run's directory): an earlier run's for this model, else what
    ``decide(stage, model_sha256)`` did, named on stderr if skipped and written once it is done."""
    sha = model_sha(stage.bundle_dir)
    record_path = stage.out / name
    if (old := done(record_path, sha)) is not None:
        return old
    record = decide(stage, sha)
    said(record, what)
    record["model_sha256"] = sha
    atomic_write(record_path, json.dumps(record, indent=2) + "\n")
    return record


def fast_stage(stage: StageInput) -> dict[str, JSON]:
    """The fast-twin stage; its record (``twin.json``), also when skipped."""
    return recorded_stage(stage, TWIN_RECORD, "fast twin", _fast)


def _fast(stage: StageInput, sha: str) -> dict[str, JSON]:
    """Decides, estimates (printed) and runs the fast-twin synthesis; the record of what happened."""
    asked, name = stage.config.twins, stage.spec.name
    if asked == "off":
        return skipped("turned off (--twins off)")
    recording = session(name, "fast")
    offline = stage.llm_spec.startswith("replay:")
    if offline and recording is None:
        return skipped(f"no fast-twin session of {name} ships with cwm (a live LLM writes one with --twins on)")
    if not offline and asked != "on":
        return skipped("the run's LLM is live: it writes a fast twin only when asked (--twins on)")
    recorded = provenance(recording) if offline and recording else {}
    if offline and recorded.get("model_sha256") != sha:
        return skipped(f"the shipped session asked for a twin of another model than this run's ({recorded.get('model_from')})")
    settings = equivalence_of(recorded)
    profile = _profile(recording if offline else None, stage.bundle_dir)
    if isinstance(profile, str):
        return skipped(f"the model could not be profiled: {profile}")
    estimate = check_cpu_s(profile, settings)
    print(f"fast twin of {name}: its equivalence check ({settings.playouts} random + {settings.playouts} "
          f"MCTS-guided playouts) is projected at {cost.duration(estimate)} of CPU", flush=True)
    llm = _Misses(make_client(f"replay:{recording}") if offline else make_client(stage.llm_spec, run_dir=stage.out / "twin"))
    base = {"session": _portable(recording) if offline else stage.llm_spec, "estimate_cpu_s": estimate,
            "equivalence": {"p": settings.p, "delta": settings.delta, "simulations": settings.simulations}}
    if estimate > AUTO_CHECK_CPU_S and asked != "on":
        why = _probe(stage, llm, settings, profile) if offline else ""
        return skipped(why or f"its check is projected at {cost.duration(estimate)} of CPU, over the "
                       f"{cost.duration(AUTO_CHECK_CPU_S)} a run spends unasked (--twins on runs it)", **base)
    return base | _run_fast(stage, llm, settings, profile)


def _profile(recording: Path | None, bundle_dir: Path) -> dict[str, Any] | str:
    """The profile a replayed session was shown (its prompt holds it), else the model's, measured now."""
    if recording is not None:
        path = recording.with_name(recording.name.split(".")[0] + ".profile.json")
        if path.is_file():
            data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="profile"), where=str(path))
            if isinstance(data, dict):
                return data
    return profile_model(read_text(bundle_dir / "model.py", what="bundle file"))


def _run_fast(stage: StageInput, llm: _Misses, settings: EquivalenceSettings,
              profile: dict[str, Any]) -> dict[str, JSON]:
    with cost.cpu_meter() as used:
        result = synthesize_fast(stage.spec, llm, SynthesisSettings.of("fast", budget=TWIN_BUDGET),  # type: ignore[arg-type]
                                 run_dir=stage.out / "twin", bundle=stage.bundle_dir, equivalence=settings,
                                 profile=profile)
    spent = {"cpu_s": used.cpu_s(), "llm_calls": result.synthesis.llm_calls}
    if result.twin is None:
        why = (f"the shipped session no longer replays with today's prompts ({llm.misses[0]})" if llm.misses
               else f"no twin passed the equivalence check in {result.synthesis.llm_calls} call(s) (twin/summary.md)")
        return skipped(why, **spent)
    return {"status": "accepted", "playout": playout_checked(result.evidence), **spent}


class _Probed(Exception):
    """Raised out of a probe's synthesis once the session answered (or did not answer) its first request."""


def _probe(stage: StageInput, llm: _Misses, settings: EquivalenceSettings, profile: dict[str, Any]) -> str:
    """Why a costly check would not run anyway: ``""`` when the session answers today's first prompt, else
    that it no longer replays (no check is run: the first request is all a probe asks)."""

    class Probe(_Misses):
        def complete(self, request: Any) -> Any:
            try:
                self.client.complete(request)
            except ReplayMissError:
                raise _Probed(_missed(request)) from None
            raise _Probed("")

    try:
        synthesize_fast(stage.spec, Probe(llm.client), SynthesisSettings.of("fast", budget=1),  # type: ignore[arg-type]
                        run_dir=stage.out / "twin-probe", bundle=stage.bundle_dir, equivalence=settings,
                        profile=profile)
    except _Probed as e:
        return f"the shipped session no longer replays with today's prompts ({e})" if str(e) else ""
    return ""


def _portable(recording: Path | None) -> str:
    return f"<cwm>/data/recordings/twins/{recording.name}" if recording else ""


def planned_on(bundle_dir: Path) -> str:
    """What the run's CWM agent planned on: the model, its fast twin, or the twin with its checked playout."""
    evidence = bundle_dir / "twin_evidence.json"
    if not (bundle_dir / "twin.py").is_file() or not evidence.is_file():
        return "model"
    data = loads_bounded(read_bounded(evidence, RUN_FILE_BYTES, what="twin evidence"), where=str(evidence))
    return "twin with playout" if playout_checked(data if isinstance(data, dict) else None) else "twin"


__all__ = ["AUTO_CHECK_CPU_S", "TWINS", "StageInput", "check_cpu_s", "fast_stage", "planned_on",
           "provenance", "session"]
