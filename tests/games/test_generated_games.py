"""Every generated game, over a range of seeds of each family: its files are the same bytes for a seed, its
engine passes OpenSpiel's simulation test and cwm's oracle checks through the module path every cwm command
takes, its facts match the engine, and each tier's text holds the sentence of every parameter."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from cwm import checks, games
from cwm.cli import main
from cwm.games import generated, oracle, trajectories
from cwm.types import UsageError
from tests.games.test_prose_rules import offences

SEEDS = range(12)
CASES = [(family, seed) for family in generated.FAMILIES for seed in SEEDS]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[tuple[str, int], tuple[generated.GeneratedGame, Path]]:
    """Every case generated once into its own folder."""
    root = tmp_path_factory.mktemp("generated")
    return {(f, s): (generated.generate(f, s, root / f"{f}_{s}"), root / f"{f}_{s}") for f, s in CASES}


def module_game(game: generated.GeneratedGame, folder: Path) -> str:
    return f"{folder / game.name}.py:{game.name}"


def random_lengths(game: pyspiel.Game, n: int, seed: int) -> list[int]:
    """The lengths of ``n`` random games (chance sampled at its stated probabilities)."""
    rng, out = np.random.default_rng(seed), []
    for _ in range(n):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(actions[rng.choice(len(actions), p=probs)])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
        out.append(len(state.history()))
    return out


@pytest.mark.parametrize(("family", "seed"), CASES, ids=[f"{f}-{s}" for f, s in CASES])
def test_each_generated_game_passes_openspiel_and_cwm_checks(written, family, seed):
    game, folder = written[family, seed]
    name = module_game(game, folder)
    spec = games.resolve(name)
    engine = games.load_game(spec)
    pyspiel.random_sim_test(engine, num_sims=5, serialize=True, verbose=False)
    report = checks.run_checks(oracle.oracle_model(name), trajectories.collect(name, 3, seed=seed))
    assert report.all_passed and report.executed > 0, report.summary()
    play = checks.random_play_checks(oracle.oracle_model(name), num_games=3, seed=seed)
    assert play.all_passed, play.summary()
    facts = json.loads((folder / "facts.json").read_text(encoding="utf-8"))
    assert (facts["family"], facts["seed"], facts["name"]) == (family, seed, game.name)
    assert facts["players"] == spec.players == engine.num_players() == 2
    assert facts["chance"] == spec.stochastic and facts["information"] == spec.information
    assert facts["num_distinct_actions"] == engine.num_distinct_actions()
    assert max(random_lengths(engine, 20, seed)) <= facts["max_game_length"] == engine.max_game_length()


@pytest.mark.parametrize(("family", "seed"), CASES[::5], ids=[f"{f}-{s}" for f, s in CASES[::5]])
def test_the_texts_hold_every_parameter_sentence_and_load_as_the_two_tiers(written, family, seed):
    game, folder = written[family, seed]
    rulebook = (folder / f"{game.name}.md").read_text(encoding="utf-8")
    spec_text = (folder / f"{game.name}.spec.md").read_text(encoding="utf-8")
    for rule in generated.FAMILIES[family].rules(game.params):
        assert rule.prose in rulebook and rule.spec in spec_text, rule.parameter
    assert offences(rulebook) == [], "the rulebook tier holds no specification"
    assert offences(spec_text), "the spec tier gives formats and facts"
    name = module_game(game, folder)
    assert games.rules_text(games.resolve(name, rules="prose")) == rulebook
    assert games.rules_text(games.resolve(name, rules="spec")) == spec_text
    assert games.rules_text(games.resolve(name)) == rulebook, "the .md beside the module is the default"


@pytest.mark.parametrize("family", list(generated.FAMILIES))
def test_every_rule_of_a_family_is_switched_on_by_some_seed_and_seeds_differ(family):
    module = generated.FAMILIES[family]
    drawn = [generated.make(family, s) for s in SEEDS]
    seen = {rule for g in drawn for rule in module.rules_on(g.params)}
    assert seen == set(module.RULES_ON), f"never drawn: {set(module.RULES_ON) - seen}"
    assert len({g.params for g in drawn}) == len(drawn) and len({g.name for g in drawn}) == len(drawn)


@pytest.mark.parametrize("family", list(generated.FAMILIES))
def test_the_same_seed_writes_the_same_bytes_in_another_process(tmp_path, written, family):
    game, folder = written[family, 5]
    env_path = str(Path(__file__).resolve().parents[2])
    out = tmp_path / "again"
    run = subprocess.run([sys.executable, "-m", "cwm.cli", "games", "generate", family, "--seed", "5",
                          "--out", str(out)], capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    digest = {f: hashlib.sha256((out / f).read_bytes()).hexdigest() for f in game.files}
    assert digest == {f: hashlib.sha256((folder / f).read_bytes()).hexdigest() for f in game.files}
    assert game.name in run.stdout and "--rules prose" in run.stdout


def test_generate_refuses_bad_input_and_keeps_other_files(tmp_path, capsys):
    with pytest.raises(UsageError, match="unknown game family 'cards'"):
        generated.make("cards", 1)
    with pytest.raises(UsageError, match="non-negative"):
        generated.make("placement", -1)
    game = generated.generate("placement", 2, tmp_path)
    assert generated.generate("placement", 2, tmp_path).files == game.files, "the same files again is fine"
    (tmp_path / "facts.json").write_text("{}\n", encoding="utf-8")
    with pytest.raises(UsageError, match="facts.json already exists"):
        generated.generate("placement", 2, tmp_path)
    assert (tmp_path / "facts.json").read_text(encoding="utf-8") == "{}\n", "nothing overwritten"
    assert main(["games", "generate", "placement", "--seed", "2", "--out", str(tmp_path)]) != 0
    assert "already exists" in capsys.readouterr().err


def test_cwm_games_help_lists_generate(capsys):
    with pytest.raises(SystemExit):
        main(["games", "--help"])
    assert "generate" in capsys.readouterr().out


def test_a_module_game_finds_its_tiers_beside_it_or_says_which_is_missing(tmp_path):
    game = generated.make("placement", 3)
    module = tmp_path / f"{game.name}.py"
    module.write_text(game.files[module.name], encoding="utf-8")  # the engine alone, no rules beside it
    name = f"{module}:{game.name}"
    with pytest.raises(games.UnknownGameError, match=rf"no rulebook-tier rules: {tmp_path}/{game.name}\.md does not"):
        games.resolve(name, rules="prose")
    assert games.resolve(name, rules="spec").rules == "", "no spec file: the rules stay as they were (none)"
    (tmp_path / f"{game.name}.spec.md").write_text(game.files[f"{game.name}.spec.md"], encoding="utf-8")
    assert games.resolve(name, rules="spec").rules == str(tmp_path / f"{game.name}.spec.md")


def _changes() -> list[tuple[str, object, dict]]:
    """(family, base parameters, one change) for every parameter of every family: each change alters the
    engine's behaviour (the rule tests pin how), so each must alter both texts."""
    from tests.games.test_generated_dice_race import PLAIN as RACE
    from tests.games.test_generated_melding import PLAIN as MELD
    from tests.games.test_generated_placement import PLAIN as LINE
    from tests.games.test_generated_trick_taking import PLAIN as TRICKS

    line = [{"rows": 5}, {"cols": 5}, {"k": 4}, {"gravity": True}, {"blocked": "fixed", "blocked_cells": (1,)},
            {"blocked": "chance", "blocked_count": 2}, {"capture": 1, "move_limit": 32}, {"misere": True},
            {"pie": True}]
    race = [{"track": 12}, {"pieces": 2}, {"faces": (1, 2, 3, 4, 5, 7)}, {"weights": (2, 1, 1, 1, 1, 1)},
            {"capture": True}, {"safe": (3,)}, {"shortcuts": ((2, 5),)}, {"exact_finish": True},
            {"extra_turn": True}, {"roll_limit": 50}]
    tricks = [{"suits": 4}, {"ranks": 5}, {"hand": 4}, {"trump": "fixed", "trump_suit": "H"}, {"trump": "turned"},
              {"follow": "follow"}, {"follow": "head"}, {"scoring": "ranks"}, {"scoring": "avoid"},
              {"last_bonus": True}]
    meld = [{"suits": 4}, {"ranks": 6}, {"hand": 4}, {"melds": "sets"}, {"melds": "runs"}, {"take_discard": True},
            {"layoff": True}, {"knock_limit": 5}, {"out_bonus": 4}, {"deadwood": 2}, {"max_turns": 12}]
    return ([("placement", LINE, c) for c in line] + [("dice_race", RACE, c) for c in race]
            + [("trick_taking", TRICKS, c) for c in tricks] + [("melding", MELD, c) for c in meld])


def _texts(family: str, params) -> tuple[str, str]:
    from cwm.games.generated.render import rulebook, spec_text

    module = generated.FAMILIES[family]
    return rulebook("x_0", module, params), spec_text("x_0", module, params, {})


def test_every_parameter_shows_in_both_texts():
    covered: dict[str, set[str]] = {family: set() for family in generated.FAMILIES}
    for family, base, change in _changes():
        changed = dataclasses.replace(base, **change)
        before, after = _texts(family, base), _texts(family, changed)
        assert before[0] != after[0] and before[1] != after[1], f"{family}: {change} is silent in a text"
        covered[family] |= set(change)
    bases = {family: base for family, base, _ in _changes()}
    assert set(bases) == set(generated.FAMILIES), "every family's parameters are covered"
    for family, base in bases.items():
        # move_limit, blocked_cells, blocked_count and trump_suit are changed alongside the rule they belong to
        assert covered[family] == {f.name for f in dataclasses.fields(base)}, family


@pytest.mark.parametrize(("family", "change", "says"), [
    ("placement", {"k": 9}, "k must be 2 to the longer side"),
    ("placement", {"gravity": True, "capture": 1, "move_limit": 32}, "without gravity"),
    ("dice_race", {"shortcuts": ((5, 3),)}, "shortcuts must go forward"),
    ("dice_race", {"weights": (1, 1)}, "one per face"),
    ("trick_taking", {"hand": 7}, "dealt from the deck"),
    ("trick_taking", {"trump": "fixed", "trump_suit": "C"}, "trump_suit of the deck"),
    ("melding", {"melds": "pairs"}, "sets, runs or both"),
    ("melding", {"hand": 7}, "leaving a card in the stock"),
])
def test_parameters_an_engine_cannot_play_are_refused_in_one_line(family, change, says):
    bases = {f: b for f, b, _ in _changes()}
    with pytest.raises(ValueError, match=f"^{family} parameters: .*{says}") as e:
        generated.FAMILIES[family].build_game(f"bad_{family}", dataclasses.replace(bases[family], **change))
    assert "\n" not in str(e.value)


def test_a_hand_edited_module_with_bad_parameters_fails_to_load_in_one_line(tmp_path):
    game = generated.generate("placement", 3, tmp_path)
    module = tmp_path / f"{game.name}.py"
    text = module.read_text(encoding="utf-8")
    module.write_text(text.replace("k=5", "k=0"), encoding="utf-8")
    with pytest.raises(games.UnknownGameError, match=r"importing game module .* failed: ValueError: placement "
                                                     r"parameters: k must be 2") as e:
        games.resolve(f"{module}:{game.name}")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("tier", ["prose", "spec"])
def test_a_synthesis_of_a_generated_game_reads_the_tier_asked_for(tmp_path, tier):
    from cwm.llm import ScriptedClient
    from cwm.synthesis import SynthesisSettings, synthesize_world_model

    game = generated.generate("melding", 3, tmp_path / "game")
    spec = games.resolve(module_game(game, tmp_path / "game"), rules=tier)
    wrong = "```python\ndef get_initial_state():\n    return {}\n```\n"  # a program that fails: one call, unsolved
    result = synthesize_world_model(spec, ScriptedClient([wrong], model="a test"),
                                    SynthesisSettings.of("world_model", budget=1, num_test=0), run_dir=tmp_path / "run")
    assert not result.solved and result.llm_calls == 1
    prompt = (tmp_path / "run" / "calls" / "000000.prompt.md").read_text(encoding="utf-8")
    rules = prompt.split("## Rules of the game")[1].split("## The API to implement")[0]
    for rule in generated.melding.rules(game.params):
        assert getattr(rule, tier) in rules, rule.parameter
    assert (offences(rules) == []) == (tier == "prose"), "the rulebook has no formats; the spec has them"


@pytest.mark.parametrize("family", list(generated.FAMILIES))
def test_illegal_actions_and_moves_after_the_end_are_refused_and_change_nothing(written, family):
    game, folder = written[family, 1]
    engine = games.load_game(module_game(game, folder))
    rng = np.random.default_rng(0)
    refused = 0
    for _ in range(5):
        state = engine.new_initial_state()
        while True:
            chance = state.is_chance_node()
            allowed = set() if state.is_terminal() else {
                a for a, _ in state.chance_outcomes()} if chance else set(state.legal_actions())
            ids = range(engine.max_chance_outcomes() if chance else engine.num_distinct_actions())
            for bad in [a for a in ids if a not in allowed][:3]:
                before = (str(state), state.history())
                with pytest.raises(ValueError):
                    state.apply_action(bad)
                assert (str(state), state.history()) == before
                refused += 1
            if state.is_terminal():
                break
            state.apply_action(sorted(allowed)[rng.integers(len(allowed))])
    assert refused > 20


def test_a_module_from_another_generator_version_refuses_to_load(tmp_path):
    game = generated.generate("dice_race", 4, tmp_path)
    module = tmp_path / f"{game.name}.py"
    text = module.read_text(encoding="utf-8")
    assert f"require_version({generated.GENERATOR_VERSION})" in text
    module.write_text(text.replace(f"require_version({generated.GENERATOR_VERSION})", "require_version(0)"),
                      encoding="utf-8")
    with pytest.raises(games.UnknownGameError, match="written by generator version 0, and this cwm's generator is"):
        games.resolve(f"{module}:{game.name}")
