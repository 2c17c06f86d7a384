"""Match identity by content: a key is the game, the settings, each seat's agent fingerprint and the index,
so renaming an agent or moving its bundle replays nothing, changing an agent or a setting reuses nothing,
and labels are for display (labels.json); folders from before content keys are refused for playing."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from cwm.agents import AgentSpecError, Settings, parse_agent_spec
from cwm.arena import ArenaError, MatchResult, identity, match_seed, plan_jobs, tournament
from cwm.arena import replay as arena_replay
from cwm.arena import run as arena_run
from cwm.arena.plan import TournamentPlan
from planners.config import SearchConfig

DATA = Path(__file__).resolve().parent.parent / "data" / "planners"
FAST = Settings(search=SearchConfig(num_simulations=20, rollouts=1))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _play(agents, out, **kwargs):
    plan = TournamentPlan(**{"matches": 1, "settings": FAST, **kwargs})
    return tournament("tic_tac_toe", agents, plan, out_dir=out, executor="inline", progress=False)


def _move_model(src: Path, place: Path) -> Path:
    place.mkdir(parents=True)
    shutil.copy(src, place / "model.py")
    return place / "model.py"


def _outcomes(results):
    return [(r.key, r.seed, r.returns, r.actions) for r in results]


# ---------------------------------------------------------------------------------------------------
# Keys and seeds


def test_plain_spec_keys_and_seeds_are_pinned():
    """Golden values: a change here replays every finished match of every existing tournament (the settings
    hash covers every field of ``Settings``, so a new search setting, such as ``SearchConfig.leaf``, moves
    them)."""
    jobs = plan_jobs("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST, move_time_limit=None))
    assert [(j.key, j.seats, j.seed, j.fingerprints, j.index) for j in jobs] == [
        ("d70ff91c2e2e3132b1e8", ("random", "gt-mcts"), 4317194712033191659, ("random", "gt-mcts"), 0),
        ("e1be766559a2edb5bb2e", ("gt-mcts", "random"), 3287209222916896383, ("gt-mcts", "random"), 0)]
    assert all(j.seed == match_seed(0, j.key) for j in jobs)


def test_keys_follow_the_content_not_the_label_or_the_path(tmp_path):
    a = _move_model(DATA / "ttt_model.py", tmp_path / "a")
    b = _move_model(DATA / "ttt_model.py", tmp_path / "b")
    jobs_a = plan_jobs("tic_tac_toe", [f"mine=cwm:{a}", "random"], TournamentPlan(matches=2, settings=FAST, seed=3))
    jobs_b = plan_jobs("tic_tac_toe", [f"theirs=cwm:{b}", "r=random"], TournamentPlan(matches=2, settings=FAST, seed=3))
    assert [(j.key, j.seed, j.index) for j in jobs_a] == [(j.key, j.seed, j.index) for j in jobs_b]
    assert {j.seats for j in jobs_b} == {("theirs", "r"), ("r", "theirs")}
    assert {j.builds for j in jobs_b} == {(f"cwm:{b.resolve()}", "random"), ("random", f"cwm:{b.resolve()}")}
    b.write_text(b.read_text() + "\n# edited\n")
    edited = plan_jobs("tic_tac_toe", [f"mine=cwm:{b}", "random"], TournamentPlan(matches=2, settings=FAST, seed=3))
    assert not {j.key for j in edited} & {j.key for j in jobs_a}


@pytest.mark.parametrize("change", [
    {"settings": Settings(search=SearchConfig(num_simulations=21, rollouts=1))},
    {"seed": 1}, {"move_time_limit": 5.0}, {"game": "connect_four"},
], ids=["simulations", "seed", "move-limit", "game"])
def test_every_setting_is_in_the_key(change):
    base = {"game": "tic_tac_toe", "settings": FAST, "seed": 0, "move_time_limit": None}
    keys = [{j.key for j in plan_jobs(args.pop("game"), ["random", "gt-mcts"], TournamentPlan(matches=2, **args))}
            for args in (dict(base), base | change)]
    assert len(keys[0]) == 4 and not keys[0] & keys[1]


def test_two_labels_of_one_agent_are_refused():
    with pytest.raises(ArenaError, match="agents 'a' and 'b' are one agent \\(random\\); give it one label"):
        plan_jobs("tic_tac_toe", ["a=random", "b=random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST))


@pytest.mark.parametrize("agents,pairings,message", [
    (["random", "gt-mcts"], [("x=random", "x=gt-mcts")], "the label 'x' is given twice"),
    (["x=random", "gt-mcts"], [("random", "gt-mcts")], "'random' is the spec of agent 'x'; pair it by its label"),
    (["x=random", "gt-mcts"], [("x=gt-ismcts", "gt-mcts")], "the label 'x' is given twice"),
], ids=["one-label-two-specs", "named-by-bare-spec", "label-of-another-spec"])
def test_labels_seated_only_by_pairings_are_checked(agents, pairings, message):
    with pytest.raises(AgentSpecError, match=message):
        plan_jobs("tic_tac_toe", agents, TournamentPlan(matches=1, settings=FAST, pairings=pairings))


def test_a_pairing_may_seat_a_new_agent_or_an_agent_by_its_own_spec():
    jobs = plan_jobs("tic_tac_toe", ["x=random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST, pairings=[("x=random", "y=gt-ismcts"), ("x", "gt-mcts")]))
    assert [j.seats for j in jobs] == [("x", "y"), ("y", "x"), ("x", "gt-mcts"), ("gt-mcts", "x")]


def test_a_bundle_is_fingerprinted_by_its_files_wherever_and_whenever_it_was_made(tmp_path):
    bundle = tmp_path / "A" / "bundle"
    bundle.mkdir(parents=True)
    (bundle / "manifest.json").write_text('{"files": {"model.py": "abc"}, "created_at": "2025-01-01"}')
    (bundle / "model.py").write_text("...")
    print_a = identity.agent_fingerprint(parse_agent_spec(f"cwm=cwm:{bundle}"))
    content = b'{"files":{"model.py":"abc"}}'  # the file list as canonical JSON, nothing else of the manifest
    assert print_a == f"cwm bundle-sha256:{hashlib.sha256(content).hexdigest()}"
    (bundle / "manifest.json").write_text('{"created_at": "2026-01-01", "files": {"model.py": "abc"}}')
    assert identity.agent_fingerprint(parse_agent_spec(f"cwm:{bundle}")) == print_a
    shutil.move(tmp_path / "A", tmp_path / "B")
    assert identity.agent_fingerprint(parse_agent_spec(f"cwm:{tmp_path / 'B' / 'bundle'}")) == print_a
    assert identity.agent_fingerprint(parse_agent_spec("llm=llm:openai:gpt-x")) == "llm:openai:gpt-x"


# ---------------------------------------------------------------------------------------------------
# Resuming by content


def test_renaming_an_agent_replays_nothing_and_shows_the_new_label(tmp_path, capsys):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    out = tmp_path / "arena"
    old = _play([f"cwm:{model}", "random"], out, matches=2)
    rows = (out / "matches.jsonl").read_text()
    named = _play([f"mine=cwm:{model}", "random"], out, matches=2)
    assert (out / "matches.jsonl").read_text() == rows  # nothing played, nothing rewritten
    assert _outcomes(named) == _outcomes(old)
    assert {r.seats for r in named} == {("mine", "random"), ("random", "mine")}
    assert set(json.loads((out / "labels.json").read_text()).values()) == {"mine", "random"}
    assert {r.seats for r in arena_replay.results_of(out)} == {("mine", "random"), ("random", "mine")}
    assert "| mine | random | all | 4 |" in (out / "results.md").read_text()
    number = next(i for i, r in enumerate(arena_replay.results_of(out), 1) if r.seats == ("mine", "random"))
    assert arena_replay.find(out, "mine|random#0").key == arena_replay.find(out, str(number)).key
    assert arena_replay.load(out, arena_replay.find(out, "mine|random#0"))["seats"][0]["label"] == "mine"


def test_a_bundle_moved_with_its_folder_resumes_without_playing(tmp_path):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    first = _play([f"mine=cwm:{model}", "random"], tmp_path / "A" / "arena", matches=2)
    shutil.move(tmp_path / "A", tmp_path / "elsewhere" / "B")
    out = tmp_path / "elsewhere" / "B" / "arena"
    before = (out / "matches.jsonl").read_text()
    again = _play([f"mine=cwm:{out.parent / 'model.py'}", "random"], out, matches=2)
    assert (out / "matches.jsonl").read_text() == before and again == first
    assert all(r.forfeit_seat is None for r in again)  # the moved model was found and played
    for name in ("matches.jsonl", "results.md", "results.csv", "results.json", "labels.json"):
        assert str(tmp_path) not in (out / name).read_text(), name


def test_an_edited_bundle_plays_its_matches_anew_and_the_former_one_keeps_its_rows(tmp_path):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    out = tmp_path / "arena"
    old = _play([f"mine=cwm:{model}", "random"], out)
    model.write_text(model.read_text() + "\n# edited\n")
    new = _play([f"mine=cwm:{model}", "random"], out)
    assert not {r.key for r in new} & {r.key for r in old}
    assert [MatchResult.from_json(r) for r in _lines(out / "matches.jsonl")] == old + new
    labels = json.loads((out / "labels.json").read_text())
    former = old[0].fingerprints[old[0].seats.index("mine")]
    assert labels[former] == f"mine@{former.rpartition(':')[2][:8]}" and "mine" in labels.values()
    shown = {s for r in arena_replay.results_of(out) for s in r.seats}
    assert shown == {"mine", labels[former], "random"}


def test_a_folder_keyed_by_labels_is_refused_and_still_read(tmp_path):
    out = tmp_path / "arena"
    out.mkdir()
    row = MatchResult("random|gt-mcts#0", ("random", "gt-mcts"), 1, (1.0, -1.0), actions=(4, 0, 8, 2, 6, 3, 7))
    (out / "matches.jsonl").write_text(json.dumps({k: v for k, v in row.to_json().items()
                                                   if k not in ("fingerprints", "index")}) + "\n")
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(ArenaError, match=r"matches.jsonl: its matches are keyed by agent label .* a new --out"):
        _play(["random", "gt-mcts"], out)
    assert sorted(p.name for p in out.iterdir()) == before
    assert "random|gt-mcts#0" in arena_replay.listing(out)
    assert arena_replay.find(out, "random|gt-mcts#0").seats == ("random", "gt-mcts")


def test_read_only_checks_come_before_the_executor_starts(tmp_path, monkeypatch):
    out = tmp_path / "arena"
    _play(["mine=random", "gt-mcts"], out)

    def no_executor(spec):
        raise AssertionError(f"started executor {spec} before refusing")

    monkeypatch.setattr(arena_run, "make_executor", no_executor)
    with pytest.raises(ArenaError, match="other settings"):
        tournament("tic_tac_toe", ["mine=random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST, seed=9), out_dir=out, executor="ray", progress=False)
    with pytest.raises(ArenaError, match="one agent"):
        tournament("tic_tac_toe", ["mine=random", "random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST), out_dir=out, executor="ray", progress=False)


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


def test_cli_naming_an_agent_then_moving_its_model_replays_nothing(tmp_path, capsys):
    model = _move_model(DATA / "ttt_model.py", tmp_path / "A")
    out = tmp_path / "arena"
    _cli(f"cwm:{model},random", out)
    old = _lines(out / "matches.jsonl")
    _cli(f"mine=cwm:{model},random", out)
    assert "| mine | random | all | 2 |" in capsys.readouterr().out
    shutil.move(tmp_path / "A", tmp_path / "B")
    _cli(f"mine=cwm:{tmp_path / 'B' / 'model.py'},random", out)
    assert _lines(out / "matches.jsonl") == old


def test_labels_are_shown_by_fingerprint_and_a_row_that_does_not_fit_is_left_as_recorded():
    fits = MatchResult("k1", ("old", "random"), 1, (1.0, -1.0), fingerprints=("cwm sha256:ab", "random"))
    odd = MatchResult("k2", ("old", "random"), 2, (1.0, -1.0), fingerprints=("cwm sha256:ab",))
    labels = {"cwm sha256:ab": "mine"}
    assert [r.seats for r in identity.shown([fits, odd], labels)] == [("mine", "random"), ("old", "random")]
