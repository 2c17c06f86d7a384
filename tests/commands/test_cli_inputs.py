"""Every input checked before work starts, with one line that says what is wrong (issue 37, item 5), and a
user's game module as first-class as a registered game (item 1): each case failed before it was fixed."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import pytest

from cwm import cli, games
from cwm.games import trajectories
from cwm.games.views import CHOSEN_VIEWS_ENV

DATA = Path(__file__).resolve().parents[1] / "data"
DUEL = DATA / "own_game" / "pocket_duel.py"
NIM = DATA / "foundation" / "tiny_nim.py"


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    return err.splitlines()[-1]


def _parsers(parser: argparse.ArgumentParser, name: str):
    """Every command's parser under ``parser``, with its name (``cwm run``)."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from _parsers(child, f"{name} {sub}")


def test_every_flag_taking_an_llm_spec_lists_every_form():
    helps = {name: a.help for name, p in _parsers(cli.build_parser(), "cwm") for a in p._actions
             if "--llm" in a.option_strings}
    assert {"cwm run", "cwm synthesize", "cwm nfg eval", "cwm nfg audit", "cwm llm answer-batch"} <= set(helps)
    for name, text in helps.items():
        assert all(form in text for form in ("gemini", "openai:MODEL", "replay:FILE", "batch:DIR")), name


@pytest.mark.parametrize("command", ["run", "synthesize"])
def test_a_folder_or_an_empty_file_given_as_rules_is_named_for_what_it_is(command, tmp_path, capsys):
    empty = tmp_path / "rules.md"
    empty.write_text("  \n\n")
    out = tmp_path / "out"
    for rules, said in ((tmp_path, "is a directory, not a file"), (empty, "is empty")):
        assert cli.main([command, "tic_tac_toe", "--rules", str(rules), "--out", str(out), "--llm",
                         "replay:nothing.jsonl"]) == 2
        assert said in _error(capsys)
    assert not out.exists()


def test_a_folder_given_as_trajectories_or_a_model_is_named_a_folder(tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text("x = 1\n")
    assert cli.main(["check", str(tmp_path), "--game", "tic_tac_toe", "--trajectories", str(tmp_path)]) == 2
    assert f"model file {str(tmp_path)!r} is a directory" in _error(capsys)
    assert cli.main(["check", str(model), "--game", "tic_tac_toe", "--trajectories", str(tmp_path)]) == 2
    assert f"trajectory file {str(tmp_path)!r} is a directory" in _error(capsys)


def test_rules_too_long_for_any_prompt_are_refused_naming_only_the_commands_flags(tmp_path, capsys):
    rules = tmp_path / "long.md"
    rules.write_text("Each player moves in turn. " * 20_000)  # ~135,000 tokens; the limit asked is 10,000
    out = tmp_path / "run"
    assert cli.main(["run", "tic_tac_toe", "--rules", str(rules), "--max-prompt-tokens", "10000",
                     "--out", str(out)]) == 2
    line = _error(capsys)
    assert "over the prompt limit of 10,000 tokens" in line and "--max-prompt-tokens" in line
    assert "--max-steps-shown" not in line and not out.exists()  # cwm run has no --max-steps-shown


@pytest.mark.parametrize(("opponents", "said"), [
    ("random,gt-mtcs", "unknown kind 'gt-mtcs' (did you mean gt-mcts?)"),
    ("random,cwm:{tmp}", "manifest.json is missing"),
])
def test_cwm_run_checks_its_opponents_before_any_synthesis(opponents, said, tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["run", "tic_tac_toe", "--opponents", opponents.format(tmp=tmp_path), "--out", str(out)]) == 2
    assert said in _error(capsys) and not out.exists()


def test_cwm_arena_checks_its_agents_before_printing_an_estimate(tmp_path, capsys):
    assert cli.main(["arena", "tic_tac_toe", "--agents", f"random,cwm:{tmp_path}", "--out",
                     str(tmp_path / "arena"), "--matches", "1"]) == 2
    err = capsys.readouterr().err
    assert "cost estimate" not in err and "manifest.json is missing" in err and len(err.strip().splitlines()) == 1


def test_nfg_audit_of_a_file_that_is_not_utf8_is_one_line(tmp_path, capsys):
    bad = tmp_path / "evals.jsonl"
    bad.write_bytes(b'{"input": "caf\xe9", "ideal": "A"}\n')
    assert cli.main(["nfg", "audit", str(bad)]) == 2
    assert "not UTF-8 text at line 1" in _error(capsys)


def test_nfg_audit_names_transcribe_when_it_skips_plain_evals_items(tmp_path, capsys):
    plain = tmp_path / "evals.jsonl"
    plain.write_text("".join(json.dumps({"input": [{"role": "user", "content": f"q{i}"}], "ideal": "A"}) + "\n"
                             for i in range(3)))
    assert cli.main(["nfg", "audit", str(plain)]) == 0
    out = capsys.readouterr().out
    assert "3 skipped" in out and "--transcribe" in out


def test_nfg_generate_of_no_items_is_refused(tmp_path, capsys):
    out = tmp_path / "tasks.jsonl"
    assert cli.main(["nfg", "generate", "--n", "0", "--out", str(out)]) == 2
    assert "--n 0" in _error(capsys) and not out.exists()


def _user_copy(tmp_path: Path, module: Path, rules: str | None = None) -> str:
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copyfile(module, folder / module.name)
    if rules is not None:
        (folder / module.name).with_suffix(".md").write_text(rules)
    return f"{folder / module.name}:{module.stem}"


def test_view_text_keeps_a_json_game_s_observations_as_one_string(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv(CHOSEN_VIEWS_ENV, raising=False)
    game = _user_copy(tmp_path, DUEL)
    out = tmp_path / "games.jsonl"
    assert cli.main(["collect", game, "--view", "text", "--n", "1", "--out", str(out)]) == 0
    assert not [r for r in caplog.records if "read as JSON" in r.getMessage()]  # chosen: nothing detected or said
    seen = trajectories.load_open(out, game=game)[0].steps[2].observations[0]
    assert set(seen) == {"observation"} and json.loads(seen["observation"])["calls"] == []


def test_view_json_is_refused_for_observations_that_are_not_json(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(CHOSEN_VIEWS_ENV, raising=False)
    game = _user_copy(tmp_path, NIM)
    assert cli.main(["collect", game, "--view", "json", "--n", "1", "--out", str(tmp_path / "g.jsonl")]) == 2
    assert "--view json: an observation of" in _error(capsys) and not (tmp_path / "g.jsonl").exists()
    assert games.resolve(game).view == "text"  # not JSON: detection keeps the text view
    assert cli.main(["collect", "tic_tac_toe", "--view", "json", "--out", str(tmp_path / "t.jsonl")]) == 2
    assert "--view is for your own game module" in _error(capsys)
    assert cli.main(["inspect", str(tmp_path), "--view", "json"]) == 2  # --game is optional there
    assert "--view needs the game" in _error(capsys)


def test_every_command_that_takes_a_game_takes_its_view():
    taking = {name: p for name, p in _parsers(cli.build_parser(), "cwm") if any(a.dest == "game" for a in p._actions)}
    assert {"cwm run", "cwm synthesize", "cwm collect", "cwm arena", "cwm check", "cwm play", "cwm export"} <= set(taking)
    for name, parser in taking.items():
        assert any("--view" in a.option_strings for a in parser._actions), name


def test_the_rules_beside_a_module_are_its_default_and_its_import_leaves_no_bytecode(tmp_path, monkeypatch):
    monkeypatch.delenv(CHOSEN_VIEWS_ENV, raising=False)
    game = _user_copy(tmp_path, NIM, rules="Take one or two stones; whoever takes the last stone wins.\n")
    assert "last stone" in games.rules_text(games.resolve(game))
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["tiny_nim.md", "tiny_nim.py"]
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copyfile(NIM, bare / "nim2.py")
    with pytest.raises(games.UnknownGameError, match=r"or write nim2\.md beside the module"):
        games.rules_text(games.resolve(f"{bare / 'nim2.py'}:tiny_nim"))


def test_real_session_refuses_a_bad_game_in_one_line(tmp_path, capsys):
    root = Path(__file__).resolve().parents[2]
    if str(root) not in sys.path:  # the experiments folder is not installed
        sys.path.append(str(root))
    from experiments import real_session
    argv = ["--work", str(tmp_path / "w"), "--answered-by", "hand-written for a test"]
    assert real_session.main([f"{tmp_path / 'nowhere.py'}:nowhere", *argv]) == 2
    line = _error(capsys)
    assert "game module" in line and "does not exist" in line
    empty = tmp_path / "empty.md"
    empty.write_text("")
    assert real_session.main(["tic_tac_toe", "--rules", str(empty), *argv]) == 2
    assert "is empty" in _error(capsys) and not (tmp_path / "w").exists()
