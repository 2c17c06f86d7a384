"""The differential equivalence check of a JAX twin (``cwm.jax_contract``) against the checked Python model:
the check of ``cwm.sandbox.equivalence`` (its playouts, its zero-failure bound, its evidence record), with the
twin's answers read through the game's action codec and its states read through its own decoder.

Three sandbox children, none of them this process: the reference plays its seeded random and MCTS-guided
playouts (``cwm.sandbox.jobs.twin.trace``); the twin replays the same actions as codec ids in a child started
with the ``jax`` import policy (``cwm.sandbox.jobs.jax_twin.trace``) and writes, at every state, who acts, the
strings of its legal mask, its chance distribution, its rewards, its observation tensors and its decoded
state; then the reference's child again reads each decoded state with the model's own functions (and encodes
each player's observation with the bundle's PPO encoder, when it has one). At every state this module compares
termination and who acts, the legal set, the chance distribution and the rewards (within ``JAX_TOLERANCE``,
relative above 1: float32); the decoded state's player, legal set and every observation with the reference
state's (so the decoder, itself LLM-written, is checked too); and each ``observation_tensor`` with the
encoder's vector of the model's observation (or the evidence says it was not compared).
"""

from __future__ import annotations

from typing import Any

from cwm import value_rules
from cwm.codec import ActionCodec
from cwm.sandbox import equivalence as eq
from cwm.sandbox.box import Sandbox
from cwm.sandbox.verdicts import JAX_TRACE_JOB, TRACE_JOB, JobResult
from cwm.text import clean
from cwm.types import JSON, CheckFailure

JAX_TOLERANCE = 1e-6  # on a chance probability, a reward or a tensor entry; relative above 1 (float32)
TARGET = "jax"
JAX_DOES_NOT_PROVE = (eq.DOES_NOT_PROVE + "; the decoder is checked only on the states these playouts reach "
                      "(that the model's functions agree there, not that decode is the only such map); states "
                      "are compared one at a time, not in the batched, jitted form planners and PPO use")
JAX_CALLS = {"termination": "current_player(state)", "current_player": "current_player(state)",
             "legal_actions": "legal_mask(state)", "chance_outcomes": "chance_probs(state)",
             "rewards": "rewards(state) (the move that led here)", "decoded": "decode(state)",
             "observation_tensor": "observation_tensor(state, player)", "error": "the twin's playout"}
_TEST_TYPE = {"error": "transition", "decoded": "observations", "observation_tensor": "observations",
              "termination": "current_player"}


def check_jax_equivalence(reference: str, twin: str, *, codec: ActionCodec, encoder: str | None = None,
                          settings: eq.EquivalenceSettings = eq.DEFAULT_EQUIVALENCE, sandbox: Sandbox | None = None,
                          name: str = "model", memo: eq.Memo | None = None) -> dict[str, JSON]:
    """Plays the differential playouts against a JAX twin and returns the evidence record (the format of
    ``check_equivalence``, with ``target`` ``"jax"``; ``cwm.sandbox.equivalence.evidence_problem`` reads it).

    Args:
      reference: the checked world model's source (untrusted: run in a sandbox child).
      twin: the JAX twin's source (untrusted: run in another child, under the ``jax`` import policy).
      codec: the game's action codec (``cwm.games.action_codec``): the twin's ids are its ids.
      encoder: the bundle's PPO observation encoder source (untrusted), to compare ``observation_tensor``
        with; ``None``: tensors are not compared (the evidence says so).
      settings: the detection bound, the playout kinds and the limits.
      sandbox: the sandbox to run the children in (default: a fresh one, closed at the end).
      name: the model's name in error messages.
      memo: the reference's records of earlier checks of the same model (``cwm.sandbox.equivalence.Memo``).

    Randomness: every playout is seeded from ``settings.seed``; the same sources and settings give the same
    evidence.
    """
    box = sandbox or Sandbox(limits=settings.limits)
    try:
        return _check(box, (reference, twin, encoder), codec, settings, (name, memo))
    finally:
        if sandbox is None:
            box.close()


def _check(box: Sandbox, sources: tuple[str, str, str | None], codec: ActionCodec, settings: eq.EquivalenceSettings,
           named: tuple[str, eq.Memo | None]) -> dict[str, JSON]:
    reference, twin, encoder = sources
    name, memo = named
    record = _skeleton(reference, twin, encoder, settings)
    plays = eq.specs(settings)
    ref_trace = eq.reference_playouts(box, reference, plays, settings, name, codec.to_json(), memo)
    if isinstance(ref_trace, str):
        return eq._verdict(record, "inconclusive", f"the reference could not be played: {ref_trace}")
    played = _twin_side(box, (reference, twin, encoder), codec, ref_trace, settings, name)
    if isinstance(played, str):
        return eq._verdict(record, "refused", played)
    twin_payload, twin_trace, decoded = played
    found = compare_jax(ref_trace, twin_trace, decoded)
    eq._count(record, plays, ref_trace, found)
    first = next((d for d in found if d is not None), None)
    if first is not None:
        where = _divergence(box, (reference, twin, twin_payload), plays[first.playout], first, settings,
                            (ref_trace, twin_trace, decoded))
        record["divergence"] = where
        return eq._verdict(record, "divergent", f"playout {first.playout + 1} ({where['kind']}, seed "
                                                f"{where['seed']}), step {first.step}: {where['summary']}")
    broken = next((i for i, p in enumerate(ref_trace) if p["error"] is not None), None)
    if broken is not None:
        return eq._verdict(record, "inconclusive", f"the reference broke its contract in playout {broken + 1}: "
                                                   f"{ref_trace[broken]['error']}")
    kinds = " + ".join(f"{settings.playouts} {k}" for k in settings.kinds)
    return eq._verdict(record, "equivalent", f"no divergence in {kinds} playouts ({record['steps_compared']} "
                                             f"states); a divergence in >= {settings.p:g} of the playouts of a "
                                             f"kind is missed with probability <= {settings.delta:g}")


def _twin_side(box: Sandbox, sources: tuple[str, str, str | None], codec: ActionCodec, ref_trace: list[dict[str, Any]],
               settings: eq.EquivalenceSettings, name: str) -> tuple[dict[str, Any], list[Any], list[Any]] | str:
    """The twin's replay of the reference's playouts and the model's reading of its decoded states: the twin's
    payload, its records and the decoded states' records, or why they could not be had (one line)."""
    reference, twin, encoder = sources
    replays = [{"kind": "replay", "actions": p["actions"]} for p in ref_trace]
    players = len(ref_trace[0]["states"][0]["rewards"]) if ref_trace and ref_trace[0]["states"] else 1
    payload = {"codec": codec.to_json(), "num_players": players, "playouts": replays, "max_steps": settings.max_steps}
    twin_trace = _twin_parsed(box.run(JAX_TRACE_JOB, twin, payload, limits=settings.limits, policy="jax"),
                              len(replays))
    if isinstance(twin_trace, str):
        return f"the twin could not be run: {twin_trace}"
    decoded = _decoded(box, reference, twin_trace, encoder, settings, (name, payload["codec"]))
    if isinstance(decoded, str):
        return f"the twin's decoded states could not be read: {decoded}"
    return payload, twin_trace, decoded


def histories_problem(reference: str, twin: str, *, codec: ActionCodec, histories: list[list[str]],
                      encoder: str | None = None, sandbox: Sandbox,
                      settings: eq.EquivalenceSettings = eq.DEFAULT_EQUIVALENCE) -> str | None:
    """Why the JAX twin disagrees with the model along given action histories (a bundle's stored games), one
    line, or ``None``: the same state-by-state comparison as the check, on these histories only.
    ``settings``: the limits and the longest history compared."""
    plays = [{"kind": "replay", "actions": list(h)} for h in histories]
    ref_trace = eq._parsed(sandbox.run(TRACE_JOB, reference, {"name": "model", "playouts": plays,
                                                              "max_steps": settings.max_steps,
                                                              "codec": codec.to_json()},
                                       limits=settings.limits), len(plays))
    if isinstance(ref_trace, str):
        return f"the model could not replay the stored games: {ref_trace}"
    played = _twin_side(sandbox, (reference, twin, encoder), codec, ref_trace, settings, "model")
    if isinstance(played, str):
        return played
    found = compare_jax(ref_trace, played[1], played[2])
    first = next((d for d in found if d is not None), None)
    if first is None:
        return None
    what = JAX_CALLS[first.field] + ("" if first.player is None else f" (player {first.player})")
    return f"stored game {first.playout + 1}, step {first.step}: the twin differs from the model in {what}"


def _skeleton(reference: str, twin: str, encoder: str | None, settings: eq.EquivalenceSettings) -> dict[str, JSON]:
    record = eq._skeleton(reference, twin, settings)
    record.update(target=TARGET, tolerance=JAX_TOLERANCE, does_not_prove=JAX_DOES_NOT_PROVE,
                  observation_tensor=("compared with the bundle's encoder (sha256 "
                                      f"{eq.fingerprint(encoder)[:16]}...)" if encoder else
                                      "not compared: the bundle has no observation encoder"))
    return record


def _decoded(box: Sandbox, reference: str, twin_trace: list[dict[str, Any]], encoder: str | None,
             settings: eq.EquivalenceSettings, named: tuple[str, JSON]) -> list[dict[str, Any]] | str:
    """The reference model's records of the twin's decoded states, one playout per twin playout (``named``:
    the model's name and the codec's JSON, by whose ids the records name actions)."""
    specs = [{"kind": "states", "states": [s["decoded"] for s in p["states"]]} for p in twin_trace]
    run = box.run(TRACE_JOB, reference, {"name": named[0], "playouts": specs, "max_steps": settings.max_steps,
                                         "encoder": encoder, "codec": named[1]}, limits=settings.limits)
    return _decoded_parsed(run, len(specs), tensors=bool(encoder))


def _decoded_parsed(run: JobResult, count: int, *, tensors: bool) -> list[dict[str, Any]] | str:
    """The records of the decoded states, checked for shape (the child ran untrusted code), or why they cannot
    be used: state records as ``cwm.sandbox.jobs.twin`` writes them, with ``tensors`` when an encoder ran."""
    if not run.ok:
        return f"{run.kind}: {run.error}"
    value = run.value
    if type(value) is not list or len(value) != count:
        return f"error: the decoded record is malformed (expected {count} playouts)"
    for i, playout in enumerate(value):
        if (type(playout) is not dict or set(playout) != {"actions", "states", "error"}
                or type(playout["states"]) is not list or (playout["error"] is not None and type(playout["error"]) is not str)):
            return f"error: the decoded record of playout {i + 1} is malformed"
        for state in playout["states"]:
            plain = {k: v for k, v in state.items() if k != "tensors"} if type(state) is dict else state
            if eq._state_problem(plain) or (tensors and not _vectors(state.get("tensors"))):
                return f"error: the decoded record of playout {i + 1} is malformed"
    return value


def _vectors(value: Any) -> bool:
    return type(value) is list and all(type(v) is list and all(type(x) in (int, float) for x in v) for v in value)


def _twin_parsed(result: JobResult, count: int) -> list[dict[str, Any]] | str:
    """The twin child's playout records, checked field by field (the child ran untrusted code: its answer is
    data, and a forged one must be refused here, not raise later), or why they cannot be used (one line)."""
    if not result.ok:
        return f"{result.kind}: {result.error}"
    value = result.value
    if type(value) is not list or len(value) != count:
        return f"error: the playout record is malformed (expected {count} playouts)"
    for i, playout in enumerate(value):
        problem = _playout_problem(playout)
        if problem:
            return f"error: the record of playout {i + 1} is malformed: {problem}"
    return value


_TWIN_KEYS = frozenset({"player", "legal", "chance", "rewards", "decoded", "tensors"})
_TWIN_WHAT = {"player": "its player is not an int", "legal": "its legal set is neither None nor a str",
              "chance": "its chance distribution is not a list of [str, number] pairs",
              "rewards": "its rewards are not a list of numbers"}


def _playout_problem(playout: Any) -> str:
    """What is wrong with one playout record of the twin child (``""``: nothing)."""
    if type(playout) is not dict or set(playout) != {"actions", "states", "error"}:
        return "not a record of actions, states and error"
    if type(playout["actions"]) is not list or any(type(a) is not str for a in playout["actions"]):
        return "its actions are not a list of str"
    if playout["error"] is not None and type(playout["error"]) is not str:
        return "its error is neither None nor a str"
    if type(playout["states"]) is not list:
        return "its states are not a list"
    for k, state in enumerate(playout["states"]):
        problem = _twin_state_problem(state)
        if problem:
            return f"state {k}: {problem}"
    return ""


def _twin_state_problem(state: Any) -> str:
    """What is wrong with one state record of the twin child (``""``: nothing)."""
    if type(state) is not dict or set(state) != _TWIN_KEYS:
        return f"not a record of {', '.join(sorted(_TWIN_KEYS))}"
    field = eq.values_problem(state)
    if field:
        return _TWIN_WHAT[field]
    if not _vectors(state["tensors"]):
        return "its tensors are not lists of numbers"
    return ""


def compare_jax(reference: list[dict[str, Any]], twin: list[dict[str, Any]],
                decoded: list[dict[str, Any]]) -> list[eq.Divergence | None]:
    """The first divergence of each playout (``None``: none): the reference's records, the twin's, and the
    reference model's records of the twin's decoded states."""
    return [_first(i, r, t, d) for i, (r, t, d) in enumerate(zip(reference, twin, decoded))]


def _first(i: int, ref: dict[str, Any], twin: dict[str, Any], dec: dict[str, Any]) -> eq.Divergence | None:
    for k, expected in enumerate(ref["states"]):
        if k >= len(twin["states"]):
            return eq.Divergence(i, len(twin["actions"]), "error")
        got = twin["states"][k]
        found = eq._field(expected, got, JAX_TOLERANCE, True)
        if found is not None:
            return eq.Divergence(i, k, *found)
        if k >= len(dec["states"]):
            return eq.Divergence(i, k, "decoded")  # the model cannot read the decoded state
        read = dec["states"][k]
        if (read["player"], read["legal"]) != (expected["player"], expected["legal"]):
            return eq.Divergence(i, k, "decoded")
        seen = eq._observations(expected["observations"], read["observations"])
        if seen is not None:
            return eq.Divergence(i, k, "decoded", seen[1])
        if "tensors" in read:
            player = _tensor_mismatch(read["tensors"], got["tensors"])
            if player is not None:
                return eq.Divergence(i, k, "observation_tensor", player)
    if twin["error"] is not None and ref["error"] is None:
        return eq.Divergence(i, len(twin["actions"]), "error")
    return None


def _tensor_mismatch(expected: list[list[float]], got: list[list[float]]) -> int | None:
    """The first player whose tensor differs from the encoder's vector (length, or an entry beyond the
    tolerance), or ``None``."""
    for player, (a, b) in enumerate(zip(expected, got)):
        if not eq._close(a, b, JAX_TOLERANCE, True):
            return player
    return None if len(expected) == len(got) else min(len(expected), len(got))


# ---------------------------------------------------------------------------------------------------
# The first divergence, reported


def _divergence(box: Sandbox, sources: tuple[str, str, dict[str, Any]], spec: dict[str, Any], first: eq.Divergence,
                settings: eq.EquivalenceSettings,
                traces: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]) -> dict[str, JSON]:
    """The first diverging state as ``cwm.sandbox.equivalence`` records one: both sides' values there (the
    reference and the twin replayed once more, whole) and the failure rendered as a failed check."""
    ref_trace, twin_trace, decoded = traces
    history = ref_trace[first.playout]["actions"][:first.step]
    expected: JSON = None
    got: JSON = None
    if first.field == "error":
        why = twin_trace[first.playout]["error"] or "the twin's playout ended before the reference's"
        lines = [f"the twin broke its contract: {why}"]
    else:
        expected, got = _values(box, sources, first, settings, history, (twin_trace, decoded))
        shown = got.pop("decoded", None) if type(got) is dict else None
        lines = eq._explain(first.field, expected, got)
        if first.field == "decoded":
            lines.append(f"the model's functions read the twin's decode(state) = {value_rules.describe(shown, 300)}")
    call = JAX_CALLS[first.field]
    if first.player is not None:
        call = call.replace("player)", f"{first.player})") if first.field == "observation_tensor" else \
            f"{call}, then get_observations(decoded)[{first.player}]"
    failure = CheckFailure(_TEST_TYPE.get(first.field, first.field), first.playout, first.step, call, expected, got,
                           "\n".join(lines), history=tuple(history), breach=first.field == "error")
    return {"playout": first.playout + 1, "kind": spec["kind"], "seed": spec["seed"], "step": first.step,
            "field": first.field, "player": first.player, "history": list(failure.history),
            "expected": failure.expected, "got": failure.got, "summary": clean(lines[0], limit=400),
            "test_type": failure.test_type, "call": failure.call, "diff": failure.diff,
            "report": failure.render(full=True)}


def _values(box: Sandbox, sources: tuple[str, str, dict[str, Any]], first: eq.Divergence,
            settings: eq.EquivalenceSettings, history: list[str],
            traces: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> tuple[JSON, JSON]:
    """The reference's and the twin's values of the diverging field at the diverging state."""
    reference, twin_source, twin_payload = sources
    twin_state = traces[0][first.playout]["states"][first.step]
    if first.field == "observation_tensor":
        read = traces[1][first.playout]["states"][first.step]
        return read["tensors"][first.player], twin_state["tensors"][first.player]
    replay = {"kind": "replay", "actions": history}
    codec = twin_payload["codec"]
    ref = _detail(box.run(TRACE_JOB, reference, {"name": "model", "playouts": [replay], "detail": first.step,
                                                 "max_steps": settings.max_steps, "codec": codec},
                          limits=settings.limits))
    if first.field == "decoded":
        read = box.run(TRACE_JOB, reference, {"name": "model", "max_steps": settings.max_steps, "detail": 0,
                                              "playouts": [{"kind": "states", "states": [twin_state["decoded"]]}],
                                              "codec": codec}, limits=settings.limits)
        states = read.value[0].get("states") if read.ok and type(read.value) is list and read.value else None
        got: dict[str, JSON] = {"decoded": twin_state["decoded"]}
        if type(states) is list and states and type(states[0]) is dict:
            got.update({k: states[0].get(k) for k in ("player", "legal", "observations")})
        else:
            got["error"] = clean(str(read.value[0].get("error") if read.ok and read.value else read.error), limit=400)
        want = None if ref is None else {k: ref.get(k) for k in ("player", "legal", "observations")}
        return want, got
    payload = dict(twin_payload, playouts=[replay], detail=first.step)
    twin = _detail(box.run(JAX_TRACE_JOB, twin_source, payload, limits=settings.limits, policy="jax"))
    key = eq._VALUE[first.field]
    return (None if ref is None else ref.get(key)), (None if twin is None else twin.get(key))


def _detail(run: JobResult) -> dict[str, Any] | None:
    """The full record a ``detail`` run wrote, or ``None`` when it could not be had."""
    value = run.value if run.ok else None
    record = value.get("record") if type(value) is dict else None
    return record if type(record) is dict else None
