"""The class-building family of gate bypasses (tests/security/builders.py), each generated variant through
every path that loads model code: the static gate and `cwm sandbox gate`, a sandbox child, and the paths
where the gate and the runtime barrier are all there is (`load_source`, `cwm check --no-sandbox`,
``load_bundle(trusted=True)``, a PPO policy's encoder under ``trusted``, a bundle's value.py). No path may
let the payload run: no marker file, no sentinel secret in any output or file, and each refusal names the
gate's rule or the runtime barrier's reason.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import io
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

from cwm import bundle, cli, games
from cwm.agents.specs import ppo_agent
from cwm.bundle.policy import PolicyConfig, init_params, save_policy_dir
from cwm.contract import ENCODER_API
from cwm.games import trajectories
from cwm.sandbox import CALL_JOB, Sandbox, load_source, static_gate
from cwm.sandbox.builders import install_codegen_guard
from cwm.sandbox.checkers import encoder_checker, value_checker
from cwm.sandbox.generated import make_generated_code_check
from cwm.sandbox.training import ContainedEnvs, TrainingRefused
from cwm.types import CwmError, ModelLoadError

from .builders import RUNTIME_ONLY, VARIANTS, Variant
from .harness import SENTINELS, leaked_files, leaked_into, markers, read_matches
from .programs import DATA, REFERENCE
from .stages import GAME, TRAIN, forge_bundle

IDS = [v.name for v in VARIANTS]


@pytest.fixture(autouse=True)
def no_marker(tmp_path: Path) -> Iterator[None]:
    """Around every test: no marker file appears, and no file under its folder holds a secret."""
    before = markers()
    yield
    assert markers() - before == set(), "a payload ran: it wrote its marker file"
    assert not leaked_files(tmp_path), leaked_files(tmp_path)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(isolation="process") as sb:
        yield sb


def refused_as(variant: Variant, message: str) -> None:
    """``message`` is the refusal the variant must get, and holds no secret."""
    expected = f"[gate: {variant.rule}]" if variant.rule else variant.runtime
    assert expected in message, message
    assert not leaked_into(message), message


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(args)
    return rc, out.getvalue(), err.getvalue()


def test_the_family_is_generated_over_constructors_and_spellings() -> None:
    assert len(VARIANTS) >= 35 and len(set(IDS)) == len(IDS)
    assert {v.name.split("-")[0] for v in VARIANTS} >= {"dataclass", "namedtuple", "NamedTuple", "TypedDict",
                                                        "Enum", "IntEnum", "Flag", "NamedTupleMeta", "EnumType"}
    assert len(RUNTIME_ONLY) >= 5  # the spellings no static rule can see


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_the_gate_refuses_what_it_can_see(variant: Variant, tmp_path: Path) -> None:
    """The static gate names the rule of every variant written where it can see it, and accepts the
    run-time spellings (which the runtime barrier refuses below); `cwm sandbox gate` says the same."""
    path = tmp_path / "model.py"
    path.write_text(variant.source, encoding="utf-8")
    rc, out, err = run_cli(["sandbox", "gate", str(path)])
    if variant.rule:
        with pytest.raises(ModelLoadError) as e:
            static_gate(variant.source)
        refused_as(variant, str(e.value))
        assert rc == 1 and f"[gate: {variant.rule}]" in out, (rc, out, err)
    else:
        static_gate(variant.source)
        assert rc == 0 and out.strip().endswith(": ok"), (rc, out, err)


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_load_source_in_process(variant: Variant) -> None:
    with pytest.raises(ModelLoadError) as e:
        load_source(variant.source)
    refused_as(variant, str(e.value))


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_a_sandbox_child(variant: Variant, sandbox: Sandbox) -> None:
    result = sandbox.run(CALL_JOB, variant.source, {"function": "get_initial_state"})
    assert (result.ok, result.kind) == (False, "static" if variant.rule else "load"), result
    refused_as(variant, result.error)


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_cwm_check_no_sandbox(variant: Variant, tmp_path: Path) -> None:
    model, train = tmp_path / "model.py", tmp_path / "train.jsonl"
    model.write_text(variant.source, encoding="utf-8")
    trajectories.save(train, TRAIN)
    rc, out, err = run_cli(["check", str(model), "--game", GAME, "--trajectories", str(train), "--no-sandbox"])
    errors = [line for line in err.splitlines() if line.startswith("cwm check: error:")]
    assert rc == 2 and len(errors) == 1, (rc, out, err)
    refused_as(variant, errors[0])
    assert "Traceback" not in err and not leaked_into(out + err)


@pytest.mark.parametrize("variant", RUNTIME_ONLY, ids=[v.name for v in RUNTIME_ONLY])
@pytest.mark.parametrize("isolate", [True, False], ids=["checked-in-sandbox", "checked-in-process"])
def test_load_bundle_trusted(variant: Variant, isolate: bool, tmp_path: Path) -> None:
    """A bundle forged around a variant the gate accepts, loaded with ``trusted=True``: refused by its
    checks in the sandbox, or (checked in-process) by the runtime barrier, before anything runs here."""
    path = forge_bundle(tmp_path / "bundle", {"model.py": variant.source})
    with pytest.raises(CwmError) as e:
        bundle.load_bundle(path, trusted=True, isolate=isolate)
    assert not leaked_into(str(e.value)), str(e.value)
    if not isolate:
        refused_as(variant, str(e.value))


@pytest.mark.parametrize("variant", RUNTIME_ONLY, ids=[v.name for v in RUNTIME_ONLY])
def test_a_bundles_value_file(variant: Variant, tmp_path: Path) -> None:
    """The same attack as a bundle's value.py beside a correct model: the bundle is refused at load."""
    path = forge_bundle(tmp_path / "bundle", {"value.py": variant.source})
    with pytest.raises(CwmError) as e:
        bundle.load_bundle(path, trusted=True, isolate=False)
    refused_as(variant, str(e.value))


@pytest.mark.parametrize("variant", RUNTIME_ONLY, ids=[v.name for v in RUNTIME_ONLY])
def test_a_trusted_ppo_encoder(variant: Variant, tmp_path: Path) -> None:
    """A PPO policy directory whose encoder.py is the attack, as a ``ppo:`` agent under ``--trust``."""
    config = PolicyConfig(obs_size=4, num_actions=9, hidden=8, game=GAME)
    save_policy_dir(tmp_path / "policy", init_params(config, seed=0), config, encoder_source=variant.source)
    with pytest.raises(ModelLoadError) as e:
        ppo_agent(str(tmp_path / "policy"), games.resolve(GAME), trusted=True, seed=0)
    refused_as(variant, str(e.value))
    with pytest.raises(ModelLoadError):  # what the agent does, and the same through the loader directly
        load_source(variant.source, name="ppo_encoder", api=ENCODER_API)


def test_model_code_compiles_without_the_loaders_future_flags(sandbox: Sandbox) -> None:
    """The loader's own ``from __future__ import annotations`` does not reach model code: annotations are
    evaluated, in-process and in a sandbox child alike."""
    source = "class A:\n    x: int\n\ndef get_initial_state():\n    return {'kind': str(A.__dict__)}\n"
    module = load_source("class A:\n    x: int\n", api=())
    assert module.A.__annotations__ == {"x": int}
    result = sandbox.run(CALL_JOB, source, {"function": "get_initial_state"}, gate=False)
    assert result.ok and "'x': <class 'int'>" in result.value["kind"], result


ATTACKS = [v for v in VARIANTS if v.name.startswith("dataclass-") and v.name != "dataclass-make-dataclass"]


@pytest.mark.parametrize("variant", ATTACKS, ids=[v.name for v in ATTACKS])
def test_each_dataclass_variant_is_a_real_attack_without_the_barriers(variant: Variant, tmp_path: Path) -> None:
    """Loaded with neither the gate nor the runtime barrier (a fresh interpreter, ``gate=False``), each
    dataclass variant does run its payload: the marker holds the sentinel key it read. So the refusals
    above stop real attacks, not programs that would have failed anyway."""
    model, marker = tmp_path / "model.py", tmp_path / "payload-ran"  # not a file the suite watches
    model.write_text(variant.writing(str(marker)), encoding="utf-8")
    code = ("import sys\nfrom cwm.sandbox import load_source\n"
            "load_source(open(sys.argv[1]).read(), gate=False)\n")
    ran = subprocess.run([sys.executable, "-c", code, str(model)], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert marker.read_text(encoding="utf-8") == SENTINELS["GEMINI_API_KEY"], ran.stderr[-2000:]
    marker.unlink()


@pytest.mark.parametrize("variant", RUNTIME_ONLY, ids=[v.name for v in RUNTIME_ONLY])
def test_cwm_arena_trust(variant: Variant, tmp_path: Path) -> None:
    """`cwm arena --trust` with the variant as a ``cwm:`` model file (loaded in the arena's process): the
    agent is refused (before the first match, or each of its matches is forfeited as an exception) with the
    runtime barrier's reason, and nothing it read reaches an output or a file."""
    model, out = tmp_path / "model.py", tmp_path / "arena"
    model.write_text(variant.source, encoding="utf-8")
    rc, stdout, err = run_cli(["arena", GAME, "--agents", f"m=cwm:{model},random", "--trust", "--matches", "1",
                               "--sims", "10", "--rollouts", "1", "--executor", "inline", "--out", str(out),
                               "--no-progress"])
    assert "Traceback" not in err and not leaked_into(stdout + err), err[-3000:]
    if rc == 2:  # refused before any match
        refused_as(variant, err)
        return
    assert rc == 0, (rc, err[-3000:])
    rows = read_matches(out / "matches.jsonl")
    assert len(rows) == 2, rows
    for row in rows:
        assert (row["forfeit_seat"], row["forfeit_kind"]) == (row["seats"].index("m"), "exception"), row
        refused_as(variant, row["reason"])


@pytest.mark.parametrize("variant", RUNTIME_ONLY, ids=[v.name for v in RUNTIME_ONLY])
def test_export_bundle(variant: Variant, tmp_path: Path) -> None:
    """Exporting the variant as a bundle's model: its checks (in the sandbox) refuse it, and no bundle is left."""
    with pytest.raises(CwmError) as e:
        bundle.export_bundle(tmp_path / "bundle", game=GAME, model_source=variant.source, train=TRAIN,
                             provenance={"llm": "hand-written-test-fixture"})
    refused_as(variant, str(e.value))
    assert not (tmp_path / "bundle" / "manifest.json").exists()


ENCODER = (DATA / "reference" / "tic_tac_toe_encoder.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("variant", RUNTIME_ONLY, ids=[v.name for v in RUNTIME_ONLY])
@pytest.mark.parametrize("role", ["model", "encoder"])
def test_ppo_training_worker(variant: Variant, role: str) -> None:
    """PPO training inside the variant (as the world model, or as the observation encoder beside the
    reference model): the training worker refuses to start or to make games, with the barrier's reason."""
    model, encoder = (variant.source, ENCODER) if role == "model" else (REFERENCE, variant.source)
    with pytest.raises(TrainingRefused) as e, ContainedEnvs(model, encoder, GAME) as envs:
        envs.make(2, seed=0).reset()
    refused_as(variant, str(e.value))


@pytest.mark.parametrize("variant", RUNTIME_ONLY, ids=[v.name for v in RUNTIME_ONLY])
@pytest.mark.parametrize("where", ["sandbox", "in-process"])
def test_value_and_encoder_synthesis_checkers(variant: Variant, where: str, sandbox: Sandbox) -> None:
    """The checkers of the value and encoder synthesis targets (what a value tournament's candidates and a
    PPO encoder pass first), in the sandbox and in this process (`--no-sandbox`): the candidate gets an
    error report with the barrier's reason and no executed check."""
    box = sandbox if where == "sandbox" else None
    for checker in (value_checker(REFERENCE, TRAIN, utility=(-1.0, 1.0), sandbox=box),
                    encoder_checker(TRAIN, sandbox=box)):
        report = checker(variant.source)
        assert report.executed == 0 and report.error, report
        refused_as(variant, report.error)


def test_legitimate_generated_classes_pass_the_generated_code_check() -> None:
    """With the code-generation guard installed in this process, dataclasses over every option the
    generators branch on, and named tuples, are built and behave as usual: the check refuses only what the
    generators never write."""
    install_codegen_guard()
    made = []
    for options in ({}, {"frozen": True}, {"order": True}, {"unsafe_hash": True}, {"eq": False}, {"slots": True},
                    {"frozen": True, "slots": True}, {"kw_only": True}, {"repr": False, "order": True, "frozen": True}):

        @dataclasses.dataclass(**options)  # type: ignore[call-overload, misc]
        class Point:
            a: int
            tags: list[int] = dataclasses.field(default_factory=list)
            scale: dataclasses.InitVar[int] = 1
            b: int = dataclasses.field(default=4, kw_only=True)

            def __post_init__(self, scale: int) -> None:
                object.__setattr__(self, "b", self.b * scale)

        first, second = Point(a=1, scale=2), Point(a=1, scale=2)  # type: ignore[call-arg]
        assert (first.a, first.tags, first.b) == (1, [], 8)
        assert (first == second) == options.get("eq", True)
        made.append(repr(first))
    assert made[0].endswith("Point(a=1, tags=[], b=8)") and " object at " in made[-1], made
    pair = collections.namedtuple("pair", ["x", "def"], rename=True, defaults=[2])
    assert pair(1)._asdict() == {"x": 1, "_1": 2}

    class Named(typing.NamedTuple):
        x: int
        y: int = 3

    assert Named(1) == (1, 3)


# Sources in the generators' own shape with one thing they never write (as a pasted name would put there).
INJECTED = {
    "a call of a builtin": "def __create_fn__():\n def __hash__(self):\n  return hash((self.x,(open('f'))))\n"
                           " return __hash__",
    "a comprehension": "def __create_fn__():\n def __hash__(self):\n  return hash((self.x,[c for c in self.y]))\n"
                       " return __hash__",
    "a dunder attribute": "def __create_fn__():\n def __hash__(self):\n  return hash((self.x,self.__base__))\n"
                          " return __hash__",
    "a class of a class": "def __create_fn__():\n def __eq__(self,other):\n  return self.__class__.__class__\n"
                          " return __eq__",
    "a subscript": "def __create_fn__():\n def __hash__(self):\n  return hash((self.x,self.y[0]))\n return __hash__",
    "a global name": "def __create_fn__():\n def __init__(self,x):\n  self.x=x\n  self.y=environ\n return __init__",
    "type with a namespace": "def __create_fn__(ns):\n def __hash__(self):\n  return hash(type('K',(),ns))\n"
                             " return __hash__",
    "a dunder string": "def __create_fn__(__dataclass_builtins_object__):\n def __init__(self,x):\n"
                       "  __dataclass_builtins_object__.__setattr__(self,'__class__',x)\n return __init__",
    "a call with keywords": "def __create_fn__():\n def __hash__(self):\n  return hash(x=1)\n return __hash__",
    "a lambda's call": "lambda _cls, x: _tuple_new(_cls, (x, print(x)))",
    "a dunder joined from pieces": "def __create_fn__(__dataclass_builtins_object__):\n def __init__(self,x):\n"
                                   "  __dataclass_builtins_object__.__setattr__(self,'_'+'_class_'+'_',x)\n"
                                   " return __init__",
    "a metaclass's super": "def __create_fn__():\n def __hash__(self):\n"
                           "  return hash(super(type(self.__class__),self.__class__).__setattr__('x',1))\n"
                           " return __hash__",
}


@pytest.mark.parametrize("what", sorted(INJECTED))
def test_the_generated_code_check_refuses_what_no_generator_writes(what: str) -> None:
    check = make_generated_code_check()
    assert check(INJECTED[what]) != ""
    assert check(INJECTED[what].encode()) == check(INJECTED[what])


def test_reflecting_views_hand_out_the_checked_type_and_keep_their_answers() -> None:
    """``typing``'s functions that read an alias's parts answer as usual, except that a metaclass among the
    answers is the checked one (it builds a class from a plain namespace, and refuses a dunder one)."""
    module = load_source(
        "import typing\nimport dataclasses\n"
        "ORIGINS = (typing.get_origin(typing.List[int]), typing.get_args(typing.Dict[str, int]))\n"
        "T = typing.get_origin(typing.Type[int])\nARGS = typing.get_args(typing.Callable[[T], int])\n"
        "Plain = T('Plain', (), {'a': 1})\n"
        "@dataclasses.dataclass\nclass D:\n    x: int = 0\n"
        "NAMES = [f.name for f in dataclasses.fields(D)]\n", api=())
    assert (list, (str, int)) == module.ORIGINS and module.NAMES == ["x"]
    assert module.T is not type and module.T(3) is int and module.Plain.a == 1
    assert module.ARGS[0] == [module.T]
    with pytest.raises(TypeError, match="may not be defined from run-time data"):
        module.T("K", (), {"__del__": print})


SCOPED = '''
import dataclasses, sys
import cwm.sandbox.builders as builders
import cwm.sandbox.generated as generated
builders.VERIFIED_PYTHON = (0, 0)  # as on a Python whose generators the source check was not checked against
builders.make_generated_code_check = lambda: (lambda source: "a shape this test refuses everywhere")
builders.install_codegen_guard()

@dataclasses.dataclass
class Callers:  # the caller's own class: no model code on the stack
    x: int

print("caller", Callers(1).x)
from cwm.sandbox import load_source
from cwm.types import ModelLoadError
try:
    load_source("import dataclasses\\n@dataclasses.dataclass\\nclass P:\\n    x: int\\n", api=())
except ModelLoadError as e:
    print("model refused", "would compile holds" in str(e))
else:
    print("model accepted")
'''


def test_on_an_unverified_python_the_source_check_refuses_only_model_classes() -> None:
    # With a source check that refuses every shape, as on a Python whose generators write shapes it does not
    # know: the caller's dataclass is built, a model's is refused (its frame is on the stack).
    done = subprocess.run([sys.executable, "-c", SCOPED], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["caller 1", "model refused True"], done.stdout
