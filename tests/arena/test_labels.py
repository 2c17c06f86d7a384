"""Labels: a named agent's results do not depend on where its files are; a label keeps naming one agent
(fingerprints in agents.json); matches recorded under a former label are taken over once and saved under
the current one; keys and seeds of plain specs are pinned."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from cwm import arena, arena_plan
from cwm.arena import ArenaError, MatchResult, match_seed, plan_jobs, tournament
from planners import AgentSpecError, Settings, parse_agent_spec
from planners.config import SearchConfig

DATA = Path(__file__).resolve().parent.parent / "data" / "planners"
FAST = Settings(search=SearchConfig(num_simulations=20, rollouts=1))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _play(agents, out, **kwargs):
    return tournament("tic_tac_toe", agents, matches=kwargs.pop("matches", 1), out_dir=out, settings=FAST,
                      executor="inline", progress=False, **kwargs)


def _move_model(src: Path, place: Path) -> Path:
    place.mkdir(parents=True)
    shutil.copy(src, place / "model.py")
    return place / "model.py"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# ---------------------------------------------------------------------------------------------------
# Keys and seeds


def test_plain_spec_keys_and_seeds_are_pinned():
    """Golden values: a change here replays every finished match of every existing tournament."""
    assert match_seed(0, "random|gt-mcts#0") == 8182696604177961085
    jobs = plan_jobs("tic_tac_toe", ["random", "gt-mcts"], matches=1, settings=FAST)
    assert [(j.key, j.seats, j.seed, j.builds) for j in jobs] == [
        ("random|gt-mcts#0", ("random", "gt-mcts"), 8182696604177961085, ("random", "gt-mcts")),
        ("gt-mcts|random#0", ("gt-mcts", "random"), 6746135120249553456, ("gt-mcts", "random"))]


def test_match_keys_and_seeds_follow_the_name_not_the_path(tmp_path):
    a = _move_model(DATA / "ttt_model.py", tmp_path / "a")
    b = _move_model(DATA / "ttt_model.py", tmp_path / "b")
    jobs_a = plan_jobs("tic_tac_toe", [f"mine=cwm:{a}", "random"], matches=2, settings=FAST, seed=3)
    jobs_b = plan_jobs("tic_tac_toe", [f"mine=cwm:{b}", "random"], matches=2, settings=FAST, seed=3)
    assert [(j.key, j.seats, j.seed) for j in jobs_a] == [(j.key, j.seats, j.seed) for j in jobs_b]
    assert {j.builds for j in jobs_b} == {(f"cwm:{b.resolve()}", "random"), ("random", f"cwm:{b.resolve()}")}
    by_label = plan_jobs("tic_tac_toe", [f"mine=cwm:{a}", "random", "gt-mcts"], matches=1, settings=FAST,
                         pairings=[("mine", "gt-mcts")])
    assert {j.key for j in by_label} == {"mine|gt-mcts#0", "gt-mcts|mine#0"}


@pytest.mark.parametrize("agents,pairings,message", [
    (["random", "gt-mcts"], [("x=random", "x=gt-mcts")], "the label 'x' is given twice"),
    (["x=random", "gt-mcts"], [("random", "gt-mcts")], "'random' is the spec of agent 'x'; pair it by its label"),
    (["x=random", "gt-mcts"], [("x=gt-ismcts", "gt-mcts")], "the label 'x' is given twice"),
], ids=["one-label-two-specs", "named-by-bare-spec", "label-of-another-spec"])
def test_labels_seated_only_by_pairings_are_checked(agents, pairings, message):
    with pytest.raises(AgentSpecError, match=message):
        plan_jobs("tic_tac_toe", agents, matches=1, settings=FAST, pairings=pairings)


def test_a_pairing_may_seat_a_new_agent_or_an_agent_by_its_own_spec():
    jobs = plan_jobs("tic_tac_toe", ["x=random", "gt-mcts"], matches=1, settings=FAST,
                     pairings=[("x=random", "y=gt-ismcts"), ("x", "gt-mcts")])
    assert [j.key for j in jobs] == ["x|y#0", "y|x#0", "x|gt-mcts#0", "gt-mcts|x#0"]


# ---------------------------------------------------------------------------------------------------
# One label, one agent


@pytest.mark.parametrize("first,second,was,now", [
    ("mine=random", "mine=gt-ismcts", "random", "gt-ismcts"),
    ("mine=cwm:{v1}", "mine=cwm:{v2}", "cwm sha256:", "cwm sha256:"),
    ("cwm:{v1}", "cwm:{v1}", "cwm sha256:", "cwm sha256:"),  # the file was rewritten in between
], ids=["other-kind", "other-model-file", "model-file-changed"])
def test_a_label_that_now_names_another_agent_is_refused(tmp_path, first, second, was, now):
    v1 = _move_model(DATA / "ttt_model.py", tmp_path / "v1")
    v2 = _move_model(DATA / "ttt_model.py", tmp_path / "v2")
    v2.write_text(v2.read_text() + "\n# v2\n")
    out = tmp_path / "arena"
    _play([first.format(v1=v1), "gt-mcts"], out)
    if first == second:
        v1.write_text(v1.read_text() + "\n# edited\n")
    before = _files(out)
    label = parse_agent_spec(first.format(v1=v1)).label
    with pytest.raises(ArenaError, match=rf"agent '{label}' was {was}.* and is now {now}.*another --out"):
        _play([second.format(v1=v1, v2=v2), "gt-mcts"], out)
    assert _files(out) == before


def test_agents_json_records_fingerprints_adds_new_labels_and_is_written_for_older_folders(tmp_path):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    out = tmp_path / "arena"
    _play([f"mine=cwm:{model}", "random"], out)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    assert json.loads((out / "agents.json").read_text()) == {"mine": f"cwm sha256:{digest}", "random": "random"}
    _play([f"mine=cwm:{model}", "random", "deep=gt-mcts"], out)
    assert json.loads((out / "agents.json").read_text())["deep"] == "gt-mcts"
    (out / "agents.json").unlink()  # as written by a cwm before agents.json
    rows = (out / "matches.jsonl").read_text()
    _play([f"mine=cwm:{model}", "random", "deep=gt-mcts"], out)
    assert (out / "matches.jsonl").read_text() == rows
    assert set(json.loads((out / "agents.json").read_text())) == {"mine", "random", "deep"}


def test_a_bundle_is_fingerprinted_by_its_manifest_wherever_it_is(tmp_path):
    bundle = tmp_path / "A" / "bundle"
    bundle.mkdir(parents=True)
    manifest = b'{"files": {"model.py": "abc"}}'
    (bundle / "manifest.json").write_bytes(manifest)
    (bundle / "model.py").write_text("...")
    print_a = arena_plan.agent_fingerprint(parse_agent_spec(f"cwm=cwm:{bundle}"))
    assert print_a == f"cwm sha256:{hashlib.sha256(manifest).hexdigest()}"
    shutil.move(tmp_path / "A", tmp_path / "B")
    assert arena_plan.agent_fingerprint(parse_agent_spec(f"cwm:{tmp_path / 'B' / 'bundle'}")) == print_a
    assert arena_plan.agent_fingerprint(parse_agent_spec("llm=llm:openai:gpt-x")) == "llm:openai:gpt-x"


# ---------------------------------------------------------------------------------------------------
# Former labels


def _row(key: str, seed: int) -> MatchResult:
    return MatchResult(key, tuple(key.partition("#")[0].split("|")), seed, (1.0, -1.0))


def _seeds(done: dict[str, MatchResult]) -> dict[str, int]:
    assert all(r.key == k and "|".join(r.seats) == k.partition("#")[0] for k, r in done.items())
    return {k: r.seed for k, r in done.items()}


def test_relabel_keeps_a_match_already_recorded_under_the_current_key():
    done = {r.key: r for r in [_row("old|random#0", 1), _row("mine|random#0", 2), _row("old|random#1", 3)]}
    assert _seeds(arena_plan.relabel(done, {"old": "mine"})) == {"mine|random#0": 2, "mine|random#1": 3}


def test_relabel_two_former_labels_of_one_name_the_first_recorded_wins():
    done = {r.key: r for r in [_row("a|random#0", 1), _row("b|random#0", 2), _row("random|b#0", 3)]}
    assert _seeds(arena_plan.relabel(done, {"a": "mine", "b": "mine"})) == {
        "mine|random#0": 1, "random|mine#0": 3}


def test_relabel_self_play():
    done = {r.key: r for r in [_row("old|old#0", 5), _row("old|random#0", 6)]}
    assert _seeds(arena_plan.relabel(done, {"old": "mine"})) == {"mine|mine#0": 5, "mine|random#0": 6}


def test_matches_recorded_before_an_agent_had_a_name_are_taken_over_once_and_saved(tmp_path):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    out = tmp_path / "A" / "arena"
    old = _play([f"cwm:{model}", "random"], out, matches=2)  # labelled by its absolute path, as before names
    named = _play([f"mine=cwm:{model}", "random"], out, matches=2)
    assert [(r.seats, r.seed, r.returns) for r in named] == [
        (tuple("mine" if s == f"cwm:{model}" else s for s in r.seats), r.seed, r.returns) for r in old]
    rows = _lines(out / "matches.jsonl")  # rewritten under the name: later resumes need no alias
    assert len(rows) == 4 and {tuple(r["seats"]) for r in rows} == {("mine", "random"), ("random", "mine")}
    assert [r["seed"] for r in rows] == [r.seed for r in old]
    assert set(json.loads((out / "agents.json").read_text())) == {"mine", "random"}
    before = (out / "matches.jsonl").read_text()
    shutil.move(tmp_path / "A", tmp_path / "B")
    out = tmp_path / "B" / "arena"
    assert _play([f"mine=cwm:{out.parent / 'model.py'}", "random"], out, matches=2) == named
    assert (out / "matches.jsonl").read_text() == before


def test_a_given_alias_takes_over_a_moved_unnamed_agent(tmp_path):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    out = tmp_path / "A" / "arena"
    old = _play([f"cwm:{model}", "random"], out)
    shutil.move(tmp_path / "A", tmp_path / "B")
    out = tmp_path / "B" / "arena"
    moved = _play([f"mine=cwm:{out.parent / 'model.py'}", "random"], out, aliases={f"cwm:{model}": "mine"})
    assert [r.seed for r in moved] == [r.seed for r in old] and len(_lines(out / "matches.jsonl")) == 2
    with pytest.raises(ArenaError, match="no agent of this tournament is labelled 'theirs'"):
        _play([f"mine=cwm:{out.parent / 'model.py'}", "random"], out, aliases={"x": "theirs"})
    with pytest.raises(ArenaError, match="alias 'random' -> 'mine': 'random' is the label of an agent"):
        _play([f"mine=cwm:{out.parent / 'model.py'}", "random"], out, aliases={"random": "mine"})


def test_a_former_label_of_another_agent_is_not_taken_over(tmp_path):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    out = tmp_path / "arena"
    old = _play([f"cwm:{model}", "random"], out)
    model.write_text(model.read_text() + "\n# edited\n")  # another model now: a given alias is refused
    with pytest.raises(ArenaError, match=rf"agent 'cwm:{model}' was cwm sha256:.* and is now \(as 'mine'\)"):
        _play([f"mine=cwm:{model}", "random"], out, aliases={f"cwm:{model}": "mine"})
    named = _play([f"mine=cwm:{model}", "random"], out)  # the automatic one is dropped: mine plays its own
    assert [r.seed for r in named] == [match_seed(0, r.key) for r in named] and named[0].seats[0] == "mine"
    assert [MatchResult.from_json(r) for r in _lines(out / "matches.jsonl")[:2]] == old  # left as they were


def test_an_automatic_alias_claimed_by_two_names_is_dropped(tmp_path):
    out = tmp_path / "arena"
    _play(["random", "gt-mcts"], out)
    now = {"a": "random", "b": "random", "gt-mcts": "gt-mcts"}
    assert arena_plan.aliases_of(["a=random", "b=random", "gt-mcts"], None, now) == {}
    results = _play(["a=random", "b=random", "gt-mcts"], out)
    assert all(r.seed == match_seed(0, r.key) for r in results)  # each played anew, under its own seed
    assert len(_lines(out / "matches.jsonl")) == 2 + 6  # the unnamed random's matches stay as they were


def test_a_crash_while_saving_relabelled_matches_leaves_the_old_file(tmp_path, monkeypatch):
    out = tmp_path / "arena"
    _play(["random", "gt-mcts"], out)
    before = (out / "matches.jsonl").read_text()

    def crash(src, dst):
        if Path(dst).name == "matches.jsonl":
            raise OSError("disk full")
        return real(src, dst)

    real = os.replace
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        _play(["r=random", "gt-mcts"], out)
    assert (out / "matches.jsonl").read_text() == before


def test_own_aliases_are_every_recorded_label_not_an_opponent(tmp_path):
    out = tmp_path / "arena"
    out.mkdir()
    rows = [_row("cwm:/old/bundle|random#0", 1), _row("gt-mcts|cwm:/older/bundle#0", 2), _row("cwm|random#1", 3)]
    (out / "matches.jsonl").write_text("".join(json.dumps(r.to_json()) + "\n" for r in rows))
    assert arena_plan.own_aliases(out, "cwm", ["random", "gt-mcts"]) == {
        "cwm:/old/bundle": "cwm", "cwm:/older/bundle": "cwm"}
    assert arena_plan.own_aliases(tmp_path / "none", "cwm", ["random"]) == {}


# ---------------------------------------------------------------------------------------------------
# Where things live


def test_a_named_cwm_agent_resumes_after_its_folder_moves(tmp_path):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    first = _play([f"mine=cwm:{model}", "random"], tmp_path / "A" / "arena", matches=2)
    shutil.move(tmp_path / "A", tmp_path / "elsewhere" / "B")
    out = tmp_path / "elsewhere" / "B" / "arena"
    before = (out / "matches.jsonl").read_text()
    again = _play([f"mine=cwm:{out.parent / 'model.py'}", "random"], out, matches=2)
    assert (out / "matches.jsonl").read_text() == before and len(_lines(out / "matches.jsonl")) == 4
    assert again == first and {r.seats for r in again} == {("mine", "random"), ("random", "mine")}
    assert all(r.forfeit_seat is None for r in again)  # the moved model was found and played
    for name in ("matches.jsonl", "results.md", "results.csv", "results.json", "agents.json"):
        assert str(tmp_path) not in (out / name).read_text(), name
    assert json.loads((out / "results.json").read_text())["config"]["agents"] == ["mine", "random"]
    assert "| mine | random | all | 4 |" in (out / "results.md").read_text()


def test_read_only_checks_come_before_the_executor_starts(tmp_path, monkeypatch):
    out = tmp_path / "arena"
    _play(["mine=random", "gt-mcts"], out)

    def no_executor(spec):
        raise AssertionError(f"started executor {spec} before refusing")

    monkeypatch.setattr(arena, "make_executor", no_executor)
    with pytest.raises(ArenaError, match="other settings"):
        tournament("tic_tac_toe", ["mine=random", "gt-mcts"], matches=1, out_dir=out, settings=FAST, seed=9,
                   executor="ray", progress=False)
    with pytest.raises(ArenaError, match="agent 'mine' was random"):
        tournament("tic_tac_toe", ["mine=gt-ismcts", "gt-mcts"], matches=1, out_dir=out, settings=FAST,
                   executor="ray", progress=False)


@pytest.mark.parametrize("agents,message", [
    (["a=random", "a=gt-mcts"], "the label 'a' is given twice"),
    (["random", "random"], "the label 'random' is given twice"),
    (["my bot=random", "gt-mcts"], "the name 'my bot' is not a letter"),
    (["/abs/run=cwm:x.py", "random"], "the name '/abs/run' is not a letter"),
    (["random=gt-mcts", "gt-ismcts"], "the name 'random' is another kind of agent's"),
    (["mine=", "random"], "the name needs a spec after '='"),
], ids=["same-name", "same-spec", "space", "path", "another-kind", "empty-spec"])
def test_duplicate_or_malformed_names_are_refused_before_anything_is_written(tmp_path, agents, message):
    with pytest.raises(AgentSpecError, match=message):
        _play(agents, tmp_path / "run")
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------------------------------------------
# The command line


def _cli(agents: str, out: Path) -> None:
    from cwm.cli import main

    assert main(["arena", "tic_tac_toe", "--agents", agents, "--matches", "1", "--sims", "20", "--rollouts", "1",
                 "--out", str(out), "--executor", "inline", "--no-progress"]) == 0


def test_cli_plays_a_named_agent_under_its_name(tmp_path, capsys):
    _cli(f"mine=cwm:{DATA / 'ttt_model.py'},random", tmp_path / "run")
    assert "| mine | random | all | 2 |" in capsys.readouterr().out
    seats = {tuple(r["seats"]) for r in _lines(tmp_path / "run" / "matches.jsonl")}
    assert seats == {("mine", "random"), ("random", "mine")}


def test_cli_naming_an_agent_then_moving_its_model_replays_nothing(tmp_path, capsys):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    out = tmp_path / "arena"
    _cli(f"cwm:{model},random", out)
    old = _lines(out / "matches.jsonl")
    _cli(f"mine=cwm:{model},random", out)
    named = _lines(out / "matches.jsonl")
    assert len(named) == 2 and [r["seed"] for r in named] == [r["seed"] for r in old]
    assert {tuple(r["seats"]) for r in named} == {("mine", "random"), ("random", "mine")}
    shutil.move(tmp_path / "A", tmp_path / "B")
    _cli(f"mine=cwm:{tmp_path / 'B' / 'model.py'},random", out)
    assert _lines(out / "matches.jsonl") == named
