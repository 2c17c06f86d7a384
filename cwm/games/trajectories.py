"""Record trajectories from ground-truth games; JSONL (de)serialisation; open-deck and closed-deck views."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TextIO

import numpy as np
import pyspiel

from cwm.files import InputLimitError, loads_bounded, not_a_file, read_bounded
from cwm.games import event_kinds
from cwm.games import registry as games
from cwm.types import (
    CHANCE,
    JSON,
    TRAJECTORY_SCHEMA,
    ChanceOutcome,
    ClosedEvent,
    ClosedTrajectory,
    Step,
    Trajectory,
    TrajectoryFormatError,
    UsageError,
)

MAX_FILE_BYTES = 256 << 20  # a trajectory file, checked before it is read: thousands of games with every state
# A chance node with at least this many outcomes is written once as a table by ``save(..., shared=True)``:
# bargaining's first step draws one of 1,000 instances, about 360 KB of JSON that every game repeated.
SHARED_TABLE_MIN = 16
TABLE_KIND = "chance_table"
# What a file's table references may stand for, as a multiple of its read bound: the file as if every
# reference were written out as ``save`` writes a step inline (the outcomes, the legal actions and their
# strings, non-ASCII characters as JSON escapes; bargaining's 10,000-transition set: 770 MB in a 17 MB
# file), so a few bytes of references cannot stand for an unbounded amount of data downstream.
EXPANSION_BOUND = 4

# A policy picks an action id for the current (non-chance) player of a ground-truth state.
Policy = Callable[[pyspiel.State, np.random.Generator], int]


def uniform_random(state: pyspiel.State, rng: np.random.Generator) -> int:
    """The default policy: a uniformly random legal action."""
    legal = state.legal_actions()
    return int(legal[rng.integers(len(legal))])


def sample_chance(state: pyspiel.State, rng: np.random.Generator) -> int:
    """Samples a chance outcome by its probability."""
    outcomes = state.chance_outcomes()
    probs = np.array([p for _, p in outcomes], dtype=float)
    return int(outcomes[rng.choice(len(outcomes), p=probs / probs.sum())][0])


def record(
    game: str | games.GameSpec,
    *,
    seed: int,
    policy: Policy = uniform_random,
    policy_name: str = "random",
    open_deck: bool = True,
    max_steps: int = 100_000,
    chance_policy: Policy = sample_chance,
) -> Trajectory:
    """Plays one ground-truth game and records every step.

    Args:
      game: registry name, OpenSpiel game string, or spec.
      seed: seeds both chance sampling and the policy (``np.random.default_rng(seed)``).
      policy: chooses actions for the players; uniform random by default.
      policy_name: recorded in the trajectory.
      open_deck: also record the full state at every step.
      max_steps: a guard against games that never end.
      chance_policy: chooses chance outcomes; sampled from their probabilities by default.

    Raises:
      RuntimeError: the game did not end within ``max_steps``.
    """
    spec = games.resolve(game)
    gt = games.load_game(spec)
    rng = np.random.default_rng(seed)
    state = gt.new_initial_state()
    n = gt.num_players()
    steps: list[Step] = []
    while not state.is_terminal():
        if len(steps) >= max_steps:
            raise RuntimeError(f"{spec.name}: game did not end within {max_steps} steps (seed {seed})")
        steps.append(_play_step(spec, state, rng, (policy, chance_policy), open_deck))
    return Trajectory(
        game=spec.name,
        seed=seed,
        policy=policy_name,
        num_players=n,
        steps=tuple(steps),
        final_observations=tuple(games.observe(spec, state, p) for p in range(n)),
        returns=tuple(float(r) for r in state.returns()),
        final_state=games.full_state(spec, state) if open_deck else None,
    )


def _play_step(spec: games.GameSpec, state: pyspiel.State, rng: np.random.Generator,
               policies: tuple[Policy, Policy], open_deck: bool) -> Step:
    """Chooses the move at ``state`` (a player's by the first policy, chance's by the second), records the step
    and applies the move to ``state``."""
    policy, chance_policy = policies
    player = state.current_player()
    chance: tuple[ChanceOutcome, ...] = ()
    if player == CHANCE:
        chance = tuple(
            ChanceOutcome(int(a), state.action_to_string(CHANCE, a), float(p)) for a, p in state.chance_outcomes()
        )
        legal = [c.action for c in chance]
        action = int(chance_policy(state, rng))
    else:
        legal = [int(a) for a in state.legal_actions()]
        action = int(policy(state, rng))
    observations = tuple(games.observe(spec, state, p) for p in range(state.num_players()))
    full = games.full_state(spec, state) if open_deck else None
    action_string = state.action_to_string(player, action)
    strings = tuple(state.action_to_string(player, a) for a in legal)
    before = state.returns()
    state.apply_action(action)
    return Step(player=player, legal_actions=tuple(legal), legal_action_strings=strings, chance_outcomes=chance,
                observations=observations, action=action, action_string=action_string,
                rewards=games.step_rewards(spec, state, before), state=full)


def collect(
    game: str | games.GameSpec,
    n: int,
    *,
    seed: int = 0,
    policy: Policy = uniform_random,
    policy_name: str = "random",
    open_deck: bool = True,
) -> list[Trajectory]:
    """Records ``n`` games; game ``i`` uses seed ``seed + i``, so any one can be re-recorded alone."""
    if n < 1:
        raise UsageError(f"number of trajectories must be at least 1, got {n}")
    return [
        record(game, seed=seed + i, policy=policy, policy_name=policy_name, open_deck=open_deck) for i in range(n)
    ]


def collect_covering(game: str | games.GameSpec, n: int, *, seed: int = 0, pool: int = 1) -> list[Trajectory]:
    """``n`` games of random play chosen from ``pool * n`` recorded with seeds ``seed`` to ``seed + pool * n - 1``
    to show every kind of event the pool holds (``cwm.games.event_kinds.covering_games``: greedy coverage, then the
    earliest seeds), in seed order. ``pool=1`` is ``collect(game, n, seed=seed)``. Deterministic.

    Raises:
      UsageError: ``n`` or ``pool`` below 1 (the message names the one that is).
    """
    if n < 1:
        raise UsageError(f"number of training games must be at least 1, got {n}")
    if pool < 1:
        raise UsageError(f"the pool of training games must be at least 1 times their number, got {pool}")
    return event_kinds.covering_games(collect(game, n * pool, seed=seed), n)


def closed_view(trajectory: Trajectory, player: int) -> ClosedTrajectory:
    """What one player saw and did: its observation at every state and its own actions, nothing else."""
    if not 0 <= player < trajectory.num_players:
        raise UsageError(f"player {player} out of range for a {trajectory.num_players}-player game")
    events = [
        ClosedEvent(s.observations[player], s.action_string if s.player == player else None)
        for s in trajectory.steps
    ]
    events.append(ClosedEvent(trajectory.final_observations[player], None))
    return ClosedTrajectory(
        game=trajectory.game,
        seed=trajectory.seed,
        player=player,
        num_players=trajectory.num_players,
        events=tuple(events),
        player_return=trajectory.returns[player],
    )


# ---------------------------------------------------------------------------------------------------
# JSONL


def to_json(item: Trajectory | ClosedTrajectory) -> dict[str, JSON]:
    """A trajectory as a JSON object carrying the schema version and its kind, fields in declaration order.

    Field by field, without ``dataclasses.asdict``'s deep copy of every observation and state (most of the
    cost of saving long games): it shares those values and tuples with ``item``; serialise it, don't edit it."""
    if isinstance(item, Trajectory):
        return {"schema": TRAJECTORY_SCHEMA, "kind": "open", "game": item.game, "seed": item.seed,
                "policy": item.policy, "num_players": item.num_players,
                "steps": [_step_json(s) for s in item.steps], "final_observations": item.final_observations,
                "returns": item.returns, "final_state": item.final_state}
    return {"schema": TRAJECTORY_SCHEMA, "kind": "closed", "game": item.game, "seed": item.seed,
            "player": item.player, "num_players": item.num_players,
            "events": [{"observation": e.observation, "action": e.action} for e in item.events],
            "player_return": item.player_return}


def _step_json(s: Step) -> dict[str, JSON]:
    chance = [{"action": c.action, "action_string": c.action_string, "probability": c.probability}
              for c in s.chance_outcomes]
    return {"player": s.player, "legal_actions": s.legal_actions, "legal_action_strings": s.legal_action_strings,
            "chance_outcomes": chance, "observations": s.observations, "action": s.action,
            "action_string": s.action_string, "rewards": s.rewards, "state": s.state}


def from_json(data: JSON, *, where: str = "record") -> Trajectory | ClosedTrajectory:
    """Parses one JSON object written by ``to_json``.

    Raises:
      TrajectoryFormatError: wrong schema, unknown kind, or missing/mistyped fields (names ``where``).
    """
    if not isinstance(data, dict):
        raise TrajectoryFormatError(f"{where}: expected a JSON object, got {type(data).__name__}")
    if data.get("schema") != TRAJECTORY_SCHEMA:
        raise TrajectoryFormatError(
            f"{where}: schema {data.get('schema')!r} is not {TRAJECTORY_SCHEMA!r} (not a cwm trajectory file?)"
        )
    body = {k: v for k, v in data.items() if k not in ("schema", "kind")}
    _check_fields(body, _OPEN_FIELDS if data.get("kind") == "open" else _CLOSED_FIELDS, where)
    try:
        if data.get("kind") == "open":
            body["steps"] = tuple(_step(s, where=f"{where}: step {i}") for i, s in enumerate(body["steps"]))
            for key in ("final_observations", "returns"):
                body[key] = tuple(body[key])
            return Trajectory(**body)
        if data.get("kind") == "closed":
            body["events"] = tuple(ClosedEvent(**e) for e in body["events"])
            return ClosedTrajectory(**body)
    except TrajectoryFormatError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise TrajectoryFormatError(f"{where}: malformed trajectory: {type(e).__name__}: {e}") from e
    raise TrajectoryFormatError(f"{where}: unknown trajectory kind {data.get('kind')!r}")


def _step(data: JSON, *, where: str) -> Step:
    if not isinstance(data, dict):
        raise TrajectoryFormatError(f"{where}: expected a JSON object, got {type(data).__name__}")
    _check_fields(data, _STEP_FIELDS, where)
    for j, c in enumerate(data["chance_outcomes"]):
        _check_fields(c, _CHANCE_FIELDS, f"{where}: chance_outcomes[{j}]")
    data = dict(data)
    data["chance_outcomes"] = tuple(ChanceOutcome(**c) for c in data["chance_outcomes"])
    for key in ("legal_actions", "legal_action_strings", "observations", "rewards"):
        data[key] = tuple(data[key])
    return Step(**data)


def _is_int(v: JSON) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: JSON) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _list_of(check: Callable[[JSON], bool]) -> Callable[[JSON], bool]:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


# Field -> (test, what it must be). Missing fields are left to the dataclass, which names them.
_FieldTypes = dict[str, tuple[Callable[[JSON], bool], str]]
_STEP_FIELDS: _FieldTypes = {
    "player": (_is_int, "an integer"),
    "legal_actions": (_list_of(_is_int), "a list of integers"),
    "legal_action_strings": (_list_of(lambda v: isinstance(v, str)), "a list of strings"),
    "chance_outcomes": (_list_of(lambda v: isinstance(v, dict)), "a list of objects"),
    "observations": (lambda v: isinstance(v, list), "a list"),
    "action": (_is_int, "an integer"),
    "action_string": (lambda v: isinstance(v, str), "a string"),
    "rewards": (_list_of(_is_number), "a list of numbers"),
}
_CHANCE_FIELDS: _FieldTypes = {
    "action": (_is_int, "an integer"),
    "action_string": (lambda v: isinstance(v, str), "a string"),
    "probability": (_is_number, "a number"),
}
_COMMON_FIELDS: _FieldTypes = {
    "game": (lambda v: isinstance(v, str), "a string"),
    "seed": (_is_int, "an integer"),
    "num_players": (_is_int, "an integer"),
}
_OPEN_FIELDS: _FieldTypes = {
    **_COMMON_FIELDS,
    "policy": (lambda v: isinstance(v, str), "a string"),
    "steps": (lambda v: isinstance(v, list), "a list"),
    "final_observations": (lambda v: isinstance(v, list), "a list"),
    "returns": (_list_of(_is_number), "a list of numbers"),
}
_CLOSED_FIELDS: _FieldTypes = {
    **_COMMON_FIELDS,
    "player": (_is_int, "an integer"),
    "events": (_list_of(lambda v: isinstance(v, dict)), "a list of objects"),
    "player_return": (_is_number, "a number"),
}


def _check_fields(data: JSON, fields: _FieldTypes, where: str) -> None:
    """Raises ``TrajectoryFormatError`` naming ``where`` and the field for the first mistyped field."""
    if not isinstance(data, dict):
        raise TrajectoryFormatError(f"{where}: expected a JSON object, got {type(data).__name__}")
    for key, (ok, what) in fields.items():
        if key in data and not ok(data[key]):
            raise TrajectoryFormatError(f"{where}: field {key!r} must be {what}, got {data[key]!r:.80}")


def save(path: str | Path, items: Iterable[Trajectory | ClosedTrajectory], *, shared: bool = False) -> Path:
    """Writes trajectories as JSONL (one per line), atomically: a crash leaves no half-written file.

    Args:
      shared: write each distinct chance node of at least ``SHARED_TABLE_MIN`` outcomes once, as a
        ``chance_table`` line before the first game that meets it, and let its steps refer to it
        (``{"table": id}`` in place of the outcomes, legal actions and their strings): a game whose first
        step draws from a long list (bargaining's 1,000 instances) then costs its own moves, not the
        list again. ``load`` reads both forms; off by default, so a bundle's files keep their bytes.

    Raises:
      IsADirectoryError: ``path`` is a directory (nothing is written).
      OSError: the file cannot be written; the temporary file next to it is removed.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory; give a file path such as {path / 'trajectories.jsonl'}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tables: dict[tuple[ChanceOutcome, ...], int] = {}
    try:
        with tmp.open("w", encoding="utf-8") as f:
            for item in items:
                record = to_json(item)
                if shared and isinstance(item, Trajectory):
                    record = _with_tables(record, item, tables, f)
                f.write(json.dumps(record, separators=(",", ":")) + "\n")
        tmp.replace(path)
    except BaseException:  # whatever stopped the write (even Ctrl-C): leave no temporary file behind
        tmp.unlink(missing_ok=True)
        raise
    return path


def _with_tables(record: dict[str, JSON], item: Trajectory, tables: dict[tuple[ChanceOutcome, ...], int],
                 f: TextIO) -> dict[str, JSON]:
    """``record`` with each long chance step referring to its table; a table not written yet is written to
    ``f`` first (ids in order of first use)."""
    steps = list(record["steps"])  # type: ignore[arg-type]
    for i, step in enumerate(item.steps):
        if not _tabled(step):
            continue
        key = tables.get(step.chance_outcomes)
        if key is None:
            key = tables[step.chance_outcomes] = len(tables)
            f.write(json.dumps({"schema": TRAJECTORY_SCHEMA, "kind": TABLE_KIND, "id": key,
                                "chance_outcomes": steps[i]["chance_outcomes"]},  # type: ignore[index]
                               separators=(",", ":")) + "\n")
        ref = {"table": key}
        steps[i] = {**steps[i], "legal_actions": ref, "legal_action_strings": ref,  # type: ignore[dict-item]
                    "chance_outcomes": ref}
    return {**record, "steps": steps}


def _tabled(step: Step) -> bool:
    """Whether a step is written as a reference to a chance table: a chance node with at least
    ``SHARED_TABLE_MIN`` outcomes whose legal actions and their strings are exactly its outcomes'."""
    outcomes = step.chance_outcomes
    return (step.player == CHANCE and len(outcomes) >= SHARED_TABLE_MIN
            and tuple(step.legal_actions) == tuple(c.action for c in outcomes)
            and tuple(step.legal_action_strings) == tuple(c.action_string for c in outcomes))


def load(path: str | Path, *, game: str | None = None, limit: int = MAX_FILE_BYTES,
         data: bytes | None = None) -> list[Trajectory | ClosedTrajectory]:
    """Reads a JSONL trajectory file, within bounds: its size is checked before it is read, and every line is
    parsed by ``cwm.files.loads_bounded`` (its integers, strings and nesting bounded).

    Args:
      path: the file.
      game: when given, every trajectory must be of this game (registry name or game string).
      limit: the most bytes the file may hold.
      data: the file's bytes, already read (and verified) by the caller; ``path`` then only names it.

    Raises:
      TrajectoryFormatError: missing, empty or too large file, bad JSON or a value over a bound (names the
        line), truncated last line, or a trajectory of another game.
    """
    path = Path(path)
    if data is None:
        if why := not_a_file(path, "trajectory file"):
            raise TrajectoryFormatError(why)
        try:
            data = read_bounded(path, limit, what="trajectory file")
        except InputLimitError as e:
            raise TrajectoryFormatError(str(e)) from None
    elif len(data) > limit:
        raise TrajectoryFormatError(f"trajectory file {path}: {len(data):,} bytes, over its limit of {limit:,} bytes")
    items = _parse(path, data, expanded_limit=EXPANSION_BOUND * limit)
    if game is not None:  # compared by canonical id: module paths resolved, ground-truth strings named
        expected = games.resolve(game).name
        wanted = games.canonical_id(expected)
        wrong = sorted({t.game for t in items if games.canonical_id(t.game) != wanted})
        if wrong:
            raise TrajectoryFormatError(f"{path}: trajectories of {wrong} where {expected!r} was expected")
    return items


def _parse(path: Path, data: bytes, *, expanded_limit: int) -> list[Trajectory | ClosedTrajectory]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TrajectoryFormatError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from e
    if text and not text.endswith("\n"):
        raise TrajectoryFormatError(f"{path}: the last line has no newline; the file looks truncated")
    items: list[Trajectory | ClosedTrajectory] = []
    tables: dict[int, Step] = {}
    sizes: dict[int, int] = {}  # what one reference to each table costs written out (``_written_size``)
    expanded = len(data)
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = loads_bounded(line, where=f"{path}:{i}")
        except json.JSONDecodeError as e:
            raise TrajectoryFormatError(f"{path}:{i}: not valid JSON ({e.msg} at column {e.colno})") from e
        except InputLimitError as e:
            raise TrajectoryFormatError(str(e)) from None
        if isinstance(record, dict) and record.get("kind") == TABLE_KIND:
            _add_table(record, tables, where=f"{path}:{i}")
            sizes[record["id"]] = _written_size(tables[record["id"]])  # type: ignore[index]
            continue
        item, used = _from_json_tabled(record, tables, where=f"{path}:{i}")
        expanded += sum(sizes[k] for k in used)
        if expanded > expanded_limit:
            raise TrajectoryFormatError(f"{path}:{i}: its chance-table references stand for over "
                                        f"{expanded_limit:,} bytes written out ({EXPANSION_BOUND}x the file's limit)")
        items.append(item)
    if not items:
        raise TrajectoryFormatError(f"{path}: no trajectories in the file")
    return items


def _add_table(record: dict[str, JSON], tables: dict[int, Step], *, where: str) -> None:
    """Reads a ``chance_table`` line into ``tables`` (as a step holding its outcomes, legal actions and
    their strings, shared by every step that refers to it)."""
    key, outcomes = record.get("id"), record.get("chance_outcomes")
    if record.get("schema") != TRAJECTORY_SCHEMA:
        raise TrajectoryFormatError(f"{where}: schema {record.get('schema')!r} is not {TRAJECTORY_SCHEMA!r}")
    if not _is_int(key) or key in tables:
        raise TrajectoryFormatError(f"{where}: a chance table's id must be a new integer, got {key!r:.40}")
    if not _list_of(lambda v: isinstance(v, dict))(outcomes):
        raise TrajectoryFormatError(f"{where}: a chance table's chance_outcomes must be a list of objects")
    try:
        step = _step({"player": CHANCE, "legal_actions": [], "legal_action_strings": [], "chance_outcomes": outcomes,
                      "observations": [], "action": 0, "action_string": "", "rewards": []}, where=f"{where}: table")
    except (KeyError, TypeError, ValueError) as e:  # an outcome with a missing or unknown field
        raise TrajectoryFormatError(f"{where}: a chance table's outcome is malformed ({type(e).__name__}: "
                                    f"{str(e)[:80]})") from None
    chance = step.chance_outcomes
    tables[key] = dataclasses.replace(step, legal_actions=tuple(c.action for c in chance),  # type: ignore[index]
                                      legal_action_strings=tuple(c.action_string for c in chance))


def _written_size(table: Step) -> int:
    """The bytes a step's reference to ``table`` stands for: its three fields as ``save`` writes them inline
    (the table line itself holds the outcomes once, and non-ASCII in it may be raw UTF-8 where ``save``
    writes a 6- or 12-byte escape per character)."""
    step = _step_json(table)
    fields = [step["legal_actions"], step["legal_action_strings"], step["chance_outcomes"]]
    return len(json.dumps(fields, separators=(",", ":")))


def _from_json_tabled(record: JSON, tables: dict[int, Step], *,
                      where: str) -> tuple[Trajectory | ClosedTrajectory, list[int]]:
    """``from_json`` of a record whose chance steps may refer to ``tables`` (``save(..., shared=True)``),
    and the table of each reference."""
    steps = record.get("steps") if isinstance(record, dict) and record.get("kind") == "open" else None
    if not isinstance(steps, list) or not any(isinstance(s, dict) and isinstance(s.get("chance_outcomes"), dict)
                                              for s in steps):
        return from_json(record, where=where), []
    refs: dict[int, Step] = {}
    inline = []
    for j, s in enumerate(steps):
        ref = s.get("chance_outcomes") if isinstance(s, dict) else None
        if isinstance(ref, dict):
            key = ref.get("table")
            if set(ref) != {"table"} or not _is_int(key) or key not in tables:
                raise TrajectoryFormatError(f"{where}: step {j} refers to chance table {key!r:.40}, which no "
                                            f"earlier line defines")
            refs[j] = tables[key]  # type: ignore[index]
            s = {**s, "legal_actions": [], "legal_action_strings": [], "chance_outcomes": []}
        inline.append(s)
    item = from_json({**record, "steps": inline}, where=where)  # type: ignore[dict-item]
    assert isinstance(item, Trajectory)
    shared = tuple(dataclasses.replace(s, legal_actions=refs[j].legal_actions,
                                       legal_action_strings=refs[j].legal_action_strings,
                                       chance_outcomes=refs[j].chance_outcomes) if j in refs else s
                   for j, s in enumerate(item.steps))
    return dataclasses.replace(item, steps=shared), [steps[j]["chance_outcomes"]["table"]  # type: ignore[index,call-overload,misc]
                                                     for j in refs]


def share_tables(items: Sequence[Trajectory]) -> list[Trajectory]:
    """``items`` with every long chance node (``SHARED_TABLE_MIN`` outcomes or more) that equals an earlier
    one holding that one's tuples, so equal tables are one object in memory and in a pickle (games played
    in worker processes each bring their own copy)."""
    seen: dict[tuple[ChanceOutcome, ...], Step] = {}
    out = []
    for t in items:
        steps = []
        for s in t.steps:
            first = seen.setdefault(s.chance_outcomes, s) if _tabled(s) else s
            steps.append(s if first is s else dataclasses.replace(
                s, legal_actions=first.legal_actions, legal_action_strings=first.legal_action_strings,
                chance_outcomes=first.chance_outcomes))
        out.append(dataclasses.replace(t, steps=tuple(steps)))
    return out


def load_open(path: str | Path, *, game: str | None = None, limit: int = MAX_FILE_BYTES,
              data: bytes | None = None) -> list[Trajectory]:
    """Like ``load`` but requires open-deck trajectories."""
    items = load(path, game=game, limit=limit, data=data)
    closed = [i for i, t in enumerate(items) if not isinstance(t, Trajectory)]
    if closed:
        raise TrajectoryFormatError(f"{path}: records {closed[:5]} are closed-deck; open-deck trajectories needed")
    return items  # type: ignore[return-value]


def total_steps(trajectories: Sequence[Trajectory]) -> int:
    return sum(len(t.steps) for t in trajectories)


def views_of(games: Sequence[Trajectory]) -> list[ClosedTrajectory]:
    """Every player's view of every open-deck game (what the open-deck inference checks use)."""
    return [closed_view(t, p) for t in games for p in range(t.num_players)]
