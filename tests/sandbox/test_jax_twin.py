"""JAX twins (cwm.jax_contract): what the gate and the runtime views let a twin reach, hostile twins refused in
the sandbox child, and the differential check (cwm.sandbox.jax_equivalence) on hand-written twins: equivalent
twins pass, and divergences planted in the legal mask, a chance probability, an observation tensor and the
decoder are each caught at the field they are in."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from cwm.codec import ActionCodec
from cwm.games import action_codec, resolve
from cwm.sandbox import Limits, Sandbox
from cwm.sandbox.equivalence import EquivalenceSettings, evidence_problem
from cwm.sandbox.gate import JAX_POLICY, static_gate
from cwm.sandbox.imports import make_importer
from cwm.sandbox.jax_equivalence import check_jax_equivalence
from cwm.sandbox.verdicts import JAX_TRACE_JOB
from cwm.types import CHANCE, ModelContractError, ModelLoadError

from .conftest import make_sandbox

ROOT = Path(__file__).resolve().parents[1]
TTT = (ROOT / "data" / "reference" / "tic_tac_toe_model.py").read_text()
TTT_ENCODER = (ROOT / "data" / "reference" / "tic_tac_toe_encoder.py").read_text()
DICE = (ROOT / "data" / "twins" / "dice_race.py").read_text()
TTT_JAX = (ROOT / "fixtures" / "jax_twins" / "ttt_reference.py").read_text()
DICE_JAX = (ROOT / "fixtures" / "jax_twins" / "dice_race.py").read_text()
SHARED_TTT_JAX = (ROOT / "fixtures" / "jax_twins" / "tic_tac_toe.py").read_text()
LIMITS = Limits(wall_s=120.0, cpu_s=60.0, memory_mb=2048, per_call_s=5.0)
SMALL = EquivalenceSettings(p=0.2, delta=0.05, simulations=10, limits=LIMITS)
DICE_CODEC = ActionCodec({**{(p, s): i for p in (0, 1) for i, s in enumerate(("step", "jump"))},
                          **{(-1, str(i)): i for i in range(5)}}, num_distinct_actions=2, max_chance_outcomes=5)


@pytest.fixture(scope="module")
def box() -> Sandbox:
    sb = make_sandbox("process")
    yield sb
    sb.close()


@pytest.fixture(scope="module")
def ttt_codec() -> ActionCodec:
    return action_codec(resolve("tic_tac_toe"))


def patched(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


# ---------------------------------------------------------------------------------------------------
# The gate and the views


@pytest.mark.parametrize("source", [SHARED_TTT_JAX, TTT_JAX, DICE_JAX])
def test_hand_written_twins_pass_the_jax_gate(source: str) -> None:
    static_gate(source, policy=JAX_POLICY)


ESCAPES = {
    "bare-jax": ("import jax\n", "import"),
    "jit": ("from jax import jit\n", "import"),
    "os": ("import os\n", "import"),
    "numpy": ("import numpy as np\n", "import"),
    "experimental": ("from jax.experimental import io_callback\n", "import-submodule"),
    "host-callback": ("import jax.experimental.host_callback as hcb\n", "import-submodule"),
    "debug": ("from jax import debug\n", "import"),
    "pure-callback": ("import jax.numpy as jnp\nf = jnp.pure_callback\n", "forbidden-attribute"),
    "io-callback": ("import jax.lax as lax\nf = lax.io_callback\n", "forbidden-attribute"),
    "save": ("import jax.numpy as jnp\njnp.save('/tmp/x.npy', jnp.zeros(2))\n", "forbidden-attribute"),
    "load": ("import jax.numpy as jnp\nx = jnp.load('/etc/passwd')\n", "forbidden-attribute"),
    "outfeed": ("from jax import lax\nlax.outfeed\n", "forbidden-attribute"),
    "config": ("import jax.numpy as jnp\njnp.config\n", "forbidden-attribute"),
    "open": ("def f():\n    return open('/etc/passwd').read()\n", "forbidden-name"),
    "dunder": ("import jax.numpy as jnp\nx = jnp.zeros.__globals__\n", "dunder-attribute"),
    "xla-client": ("import jax.numpy as jnp\nC = jnp.zeros(1).device.client\nC.live_arrays()\n", "forbidden-attribute"),
    "devices": ("import jax.numpy as jnp\nd = jnp.zeros(1).devices()\n", "forbidden-attribute"),
    "buffer-pointer": ("import jax.numpy as jnp\np = jnp.zeros(1).unsafe_buffer_pointer()\n", "forbidden-attribute"),
    "delete": ("import jax.numpy as jnp\njnp.zeros(1).delete()\n", "forbidden-attribute"),
    "traceback": ("import jax.numpy as jnp\ntb = jnp.zeros(1).traceback\n", "forbidden-attribute"),
    "sharding": ("import jax.numpy as jnp\ns = jnp.zeros(1).addressable_shards\n", "forbidden-attribute"),
    "rng-uniform": ("import jax.lax as lax\nx = lax.rng_uniform(0.0, 1.0, (2,))\n", "forbidden-attribute"),
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_the_jax_gate_refuses_each_escape_with_its_rule(name: str) -> None:
    source, rule = ESCAPES[name]
    with pytest.raises(ModelLoadError, match=rf"\[gate: {rule}\]") as e:
        static_gate(source, policy=JAX_POLICY)
    assert "\n" not in str(e.value)


def test_the_python_gate_still_refuses_jax_and_lists_its_own_modules() -> None:
    with pytest.raises(ModelLoadError, match=r"allowed: bisect, collections, copy.*\[gate: import\]"):
        static_gate("import jax.numpy as jnp\n")


def test_a_jax_view_holds_only_the_allowed_submodules_and_no_host_functions() -> None:
    imp = make_importer(JAX_POLICY)
    jax_view = imp("jax")
    assert sorted(k for k in vars(jax_view) if not k.startswith("__")) == ["lax", "numpy", "random"]
    jnp = imp("jax.numpy", None, None, ["zeros"])
    assert "zeros" in vars(jnp) and not {"save", "load", "pure_callback", "fromfile"} & set(vars(jnp))
    assert not {"outfeed", "infeed", "io_callback"} & set(vars(imp("jax.lax", None, None, ["scan"])))
    with pytest.raises(ImportError, match="not allowed"):
        imp("jax.experimental")
    with pytest.raises(ImportError, match="not allowed"):
        imp("numpy")


# ---------------------------------------------------------------------------------------------------
# Hostile twins, in the child


def _trace(box: Sandbox, source: str, codec: ActionCodec, *, gate: bool = True, actions: tuple[str, ...] = ()):
    payload = {"codec": codec.to_json(), "num_players": 2, "max_steps": 50,
               "playouts": [{"kind": "replay", "actions": list(actions)}]}
    return box.run(JAX_TRACE_JOB, source, payload, limits=LIMITS, gate=gate, policy="jax")


def test_a_hand_written_twin_is_traced_inside_the_child(box: Sandbox, ttt_codec: ActionCodec) -> None:
    result = _trace(box, TTT_JAX, ttt_codec, actions=("x(1,1)", "o(0,0)"))
    assert result.ok, result.error
    states = result.value[0]["states"]
    assert [s["player"] for s in states] == [0, 1, 0]
    assert states[2]["decoded"] == {"board": ["o", ".", ".", ".", "x", ".", ".", ".", "."], "player": 0}


HOSTILE = {
    # past the gate (gate=False), the runtime views still hold nothing that reaches the host
    "callback-at-runtime": ("import jax\nf = jax.pure_callback\n", False, "load"),
    "save-at-runtime": ("import jax.numpy as jnp\njnp.save('/tmp/cwm-jax-escape.npy', jnp.zeros(2))\n", False,
                        "load"),
    "env-at-runtime": ("import jax\nx = jax.numpy.zeros.__globals__['os'].environ\n", False, "load"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_twins_are_refused_with_one_line(box: Sandbox, ttt_codec: ActionCodec, name: str) -> None:
    body, gate, kind = HOSTILE[name]
    result = _trace(box, body + TTT_JAX, ttt_codec, gate=gate)
    assert not result.ok and result.kind == kind
    assert result.error.splitlines()[0]
    assert not Path("/tmp/cwm-jax-escape.npy").exists()


def test_a_twin_that_spins_while_traced_is_stopped_by_the_per_call_budget(box: Sandbox,
                                                                           ttt_codec: ActionCodec) -> None:
    spin = patched(TTT_JAX, "def current_player(state):\n", "def current_player(state):\n    while True:\n"
                                                            "        pass\n")
    result = _trace(box, spin, ttt_codec)
    assert not result.ok and result.kind == "timeout"


def test_a_twin_that_spins_inside_xla_is_stopped_by_the_cpu_limit(box: Sandbox, ttt_codec: ActionCodec) -> None:
    # float32 stops counting at 2**24, so the loop never ends
    spin = patched(TTT_JAX, "    return jnp.where(_over(state), -4, state[\"player\"]).astype(jnp.int32)",
                   "    n = lax.while_loop(lambda c: c < jnp.inf, lambda c: c + 1.0, jnp.float32(state[\"player\"]))\n"
                   "    return jnp.where(_over(state), -4, (n * 0).astype(jnp.int32) + state[\"player\"]).astype(jnp.int32)")
    spin = spin.replace("import jax.numpy as jnp\n", "import jax.numpy as jnp\nfrom jax import lax\n")
    tight = Limits(wall_s=120.0, cpu_s=8.0, memory_mb=2048, per_call_s=2.0)
    payload = {"codec": ttt_codec.to_json(), "num_players": 2, "max_steps": 5, "playouts": [{"kind": "replay",
                                                                                             "actions": []}]}
    result = box.run(JAX_TRACE_JOB, spin, payload, limits=tight, policy="jax")
    assert not result.ok and result.kind == "timeout", (result.kind, result.error)


def test_a_decoder_that_returns_a_lying_str_is_read_as_a_plain_str_and_caught(box: Sandbox,
                                                                              ttt_codec: ActionCodec) -> None:
    lying = patched(TTT_JAX, 'def decode(state):\n', 'class Lie(str):\n    def __eq__(self, other):\n'
                    '        return True\n\n\ndef decode(state):\n    return {"board": Lie("x"), "player": 0}\n\n\n'
                    'def _unused(state):\n')
    result = _trace(box, lying, ttt_codec)
    assert result.ok and result.value[0]["states"][0]["decoded"] == {"board": "x", "player": 0}
    evidence = check_jax_equivalence(TTT, lying, codec=ttt_codec, settings=SMALL, sandbox=box)
    assert evidence["verdict"] == "divergent" and evidence["divergence"]["field"] == "decoded"
    assert "\n" not in evidence["reason"]


def test_constants_that_disagree_with_the_codec_are_refused(box: Sandbox, ttt_codec: ActionCodec) -> None:
    result = _trace(box, patched(TTT_JAX, "NUM_DISTINCT_ACTIONS = 9", "NUM_DISTINCT_ACTIONS = 10"), ttt_codec)
    assert not result.ok and "NUM_DISTINCT_ACTIONS is 10, the game's codec has 9" in result.error


# ---------------------------------------------------------------------------------------------------
# The differential check


def test_an_equivalent_twin_passes_with_evidence_that_vouches_for_it(box: Sandbox, ttt_codec: ActionCodec) -> None:
    evidence = check_jax_equivalence(TTT, TTT_JAX, codec=ttt_codec, encoder=TTT_ENCODER, settings=SMALL,
                                     sandbox=box)
    assert evidence["verdict"] == "equivalent", evidence["reason"]
    assert evidence["target"] == "jax" and evidence["steps_compared"] > 2 * SMALL.playouts * 5
    assert evidence["observation_tensor"].startswith("compared with the bundle's encoder")
    assert evidence_problem(evidence, TTT, TTT_JAX, target="jax") is None
    assert "about a 'jax' twin, not a python twin" in evidence_problem(evidence, TTT, TTT_JAX)


def test_a_chance_game_twin_passes_and_tensors_are_said_not_compared_without_an_encoder(box: Sandbox) -> None:
    evidence = check_jax_equivalence(DICE, DICE_JAX, codec=DICE_CODEC, settings=SMALL, sandbox=box)
    assert evidence["verdict"] == "equivalent", evidence["reason"]
    assert evidence["observation_tensor"] == "not compared: the bundle has no observation encoder"


# The dice race with strings that depend on the state, as backgammon's do: an action's and an outcome's
# string carry their id and then what the state makes of them, so one id has many strings.
NAMED_DICE = patched(patched(patched(DICE, 'return ["step", "jump"]',
                                     'at = state["pos"][state["player"]]\n'
                                     '    return [f"0 - step from {at}", f"1 - jump from {at}"]'),
                             'return list(STEP) if state["pending"] == "step" else list(JUMP)',
                             'kind = state["pending"]\n'
                             '    return [(f"chance outcome {a} (after a {kind})", p)\n'
                             '            for a, p in (STEP if kind == "step" else JUMP)]'),
                     '"pending": action}', '"pending": action.split(" - ")[1].split()[0]}')
NAMED_DICE = patched(NAMED_DICE, "+= int(action)", "+= int(action.split()[2])")
NAMED_DICE_CODEC = ActionCodec({(0, "0 - step"): 0, (0, "1 - jump"): 1, (1, "0 - step"): 0,  # player 1's jump unmet
                                **{(-1, f"chance outcome {i}"): i for i in range(5)}},
                               num_distinct_actions=2, max_chance_outcomes=5, prefixed=True)


def test_a_codec_names_every_id_of_a_game_whose_strings_carry_their_id(ttt_codec: ActionCodec) -> None:
    codec = action_codec(resolve("backgammon"))
    met = {aid for player, _, aid in codec.to_table() if player == 1}
    unmet = next(a for a in range(codec.num_distinct_actions) if a not in met)
    assert codec.name(1, min(met)) == codec.to_string(1, min(met))
    assert codec.name(1, unmet) == f"{unmet} - ..." and codec.to_id(1, codec.name(1, unmet)) == unmet
    assert codec.name(CHANCE, 3) == codec.to_string(CHANCE, 3)
    for player, aid in ((1, codec.num_distinct_actions), (1, -1), (CHANCE, codec.max_chance_outcomes)):
        with pytest.raises(ModelContractError):
            codec.name(player, aid)
    with pytest.raises(ModelContractError):  # a game whose strings do not carry their id names only what it met
        ttt_codec.name(0, 9)
    with pytest.raises(ValueError, match="carries another id than its own"):  # one name, one id
        ActionCodec({(0, "1 - step"): 0, (0, "1 - jump"): 1}, num_distinct_actions=2, max_chance_outcomes=0)


def test_a_twin_of_a_game_whose_strings_depend_on_the_state_is_compared_by_ids(box: Sandbox) -> None:
    """A JAX twin names an action only by its id (the codec's one string); the model's strings for the same
    id differ by state (as backgammon's moves differ by the dice), and the codec has not met every id's string
    (here player 1's jump; backgammon's 1,352 move ids are learnt from a few random games). The reference's
    legal sets and chance outcomes are recorded under the codec's names of their ids, so a twin that agrees id
    for id passes, and one that swaps two probabilities is still caught in the chance distribution."""
    memo: dict = {}  # the reference's records, shared as a synthesis shares them: the same evidence
    evidence = check_jax_equivalence(NAMED_DICE, DICE_JAX, codec=NAMED_DICE_CODEC, settings=SMALL, sandbox=box,
                                     memo=memo)
    assert evidence["verdict"] == "equivalent", evidence["reason"]
    wrong = patched(DICE_JAX, "[0.0, 0.5, 0.3, 0.2, 0.0]", "[0.0, 0.5, 0.2, 0.3, 0.0]")
    evidence = check_jax_equivalence(NAMED_DICE, wrong, codec=NAMED_DICE_CODEC, settings=SMALL, sandbox=box,
                                     memo=memo)
    assert evidence["verdict"] == "divergent" and evidence["divergence"]["field"] == "chance_outcomes"
    assert ["chance outcome 2", 0.3] in evidence["divergence"]["expected"]  # the report names ids as the twin does
    assert len(memo) == 1
    assert evidence == check_jax_equivalence(NAMED_DICE, wrong, codec=NAMED_DICE_CODEC, settings=SMALL, sandbox=box)


PLANTED = {
    "mask": (TTT_JAX, 'return (state["board"] == 0) & ~_over(state)',
             'return (state["board"] == 0) & ~_over(state) & (jnp.arange(9) != 4)', "legal_actions"),
    "tensor": (TTT_JAX, "mine, theirs = player + 1, 2 - player", "theirs, mine = player + 1, 2 - player",
               "observation_tensor"),
    "decoder": (TTT_JAX, '"player": int(state["player"])}', '"player": 1 - int(state["player"])}', "decoded"),
    "chance": (DICE_JAX, "[0.0, 0.5, 0.3, 0.2, 0.0]", "[0.0, 0.5, 0.2, 0.3, 0.0]", "chance_outcomes"),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_planted_divergence_is_caught_in_its_field(box: Sandbox, ttt_codec: ActionCodec, name: str) -> None:
    source, old, new, field = PLANTED[name]
    reference, codec, encoder = (DICE, DICE_CODEC, None) if source is DICE_JAX else (TTT, ttt_codec, TTT_ENCODER)
    twin = patched(source, old, new)
    evidence = check_jax_equivalence(reference, twin, codec=codec, encoder=encoder, settings=SMALL, sandbox=box)
    assert evidence["verdict"] == "divergent"
    assert evidence["divergence"]["field"] == field
    assert "\n" not in evidence["reason"]
    assert "verdict is 'divergent'" in evidence_problem(evidence, reference, twin, target="jax")
    report = evidence["divergence"]["report"]
    assert evidence["divergence"]["call"].split("(")[0] in report


def test_a_twin_the_gate_refuses_gets_a_refused_verdict(box: Sandbox, ttt_codec: ActionCodec) -> None:
    evidence = check_jax_equivalence(TTT, "import os\n" + TTT_JAX, codec=ttt_codec, settings=SMALL, sandbox=box)
    assert evidence["verdict"] == "refused" and "[gate: import]" in evidence["reason"]


# ---------------------------------------------------------------------------------------------------
# The benchmark


def test_the_benchmark_counts_contained_transitions_and_openspiel_s_on_the_same_game(benchmark_module) -> None:
    import argparse

    bench = benchmark_module("bench_jax_twin")
    args = argparse.Namespace(batch=8, steps=16, repeats=2)
    rate, transitions, cpu, inside = bench.twin_rate(SHARED_TTT_JAX, resolve("tic_tac_toe"), args)
    # 2 runs of 8 games x 16 steps: every step of a live game is a transition; a finished game restarts
    # (so little work gives no rate: the CPU of compiling varies more than it costs)
    assert 2 * 8 * 16 * 0.5 < transitions <= 2 * 8 * 16
    assert isinstance(rate, float) and isinstance(inside, float)
    ref, steps, ref_cpu = bench.reference_rate("tic_tac_toe", 500)
    assert steps == 500 and ref_cpu >= 0


def _descendants(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        parent = stack.pop()
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                if ppid == parent:
                    found.append(int(entry.name))
                    stack.append(int(entry.name))
    return found


def test_every_thread_of_a_jax_child_runs_under_seccomp_without_capabilities() -> None:
    """XLA starts its threads before the layers go up and runs the twin's compiled code on them: each of them,
    read from outside through /proc while a twin spins, has no capabilities, no_new_privs and the seccomp filter
    (a thread's capabilities are its own, and a filter loaded without thread synchronisation covers only the
    thread that loads it)."""
    import threading

    spin = ("import jax.lax as lax\nimport jax.numpy as jnp\n"
            "X = lax.while_loop(lambda s: s >= 0.0, lambda s: s * 1.0000001 + 1.0, jnp.float32(0))\n")
    done: dict[str, Any] = {}

    def run() -> None:
        with Sandbox(limits=Limits(wall_s=120.0, cpu_s=15.0, memory_mb=4096, per_call_s=60.0)) as sb:
            done["result"] = sb.run(JAX_TRACE_JOB, spin, {"codec": {}, "num_players": 2, "playouts": [], "max_steps": 1},
                                    policy="jax")

    runner = threading.Thread(target=run)
    runner.start()
    seen: dict[str, list[str]] = {}
    while runner.is_alive() and not seen:
        time.sleep(0.5)
        for child in _descendants(os.getpid()):
            tasks = Path(f"/proc/{child}/task")
            try:
                if len(list(tasks.iterdir())) < 4 or "tf_XLAEigen" not in {(t / "comm").read_text().strip()
                                                                           for t in tasks.iterdir()}:
                    continue
                time.sleep(1.0)
                for task in tasks.iterdir():
                    status = dict(line.split(":", 1) for line in (task / "status").read_text().splitlines() if ":" in line)
                    seen[task.name] = [status["CapEff"].strip(), status["NoNewPrivs"].strip(), status["Seccomp"].strip()]
            except (OSError, KeyError):
                seen.clear()
    runner.join()
    assert len(seen) >= 4, seen  # XLA's threads were there to be read
    assert all(v == ["0000000000000000", "1", "2"] for v in seen.values()), seen
    assert done["result"].kind == "timeout"
