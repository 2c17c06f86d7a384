"""A failure report an LLM reads: an exception shows the model's own frames, not the library's that called
it, and no made-up value."""

from __future__ import annotations

from pathlib import Path

from cwm import checks, games, model
from cwm.games import trajectories
from cwm.sandbox import load_source

MODEL = Path(__file__).resolve().parents[1] / "data" / "reference" / "tic_tac_toe_model.py"


def _raising_model(body_line: str) -> model.WorldModel:
    source = "import json\n" + MODEL.read_text().replace("def get_rewards(state):\n",
                                                           f"def get_rewards(state):\n    {body_line}\n", 1)
    return model.WorldModel(load_source(source), codec=model.ActionCodec.from_game(
        games.load_game("tic_tac_toe")), name="raiser")


def test_an_exception_shows_only_the_models_frames_and_no_got_value():
    trajs = trajectories.collect("tic_tac_toe", n=2, seed=0)
    report = checks.run_checks(_raising_model('raise KeyError("boom")'), trajs, max_failures_per_type=1)
    (failure,) = [f for f in report.failures if f.test_type == "rewards"]
    text = failure.render()
    assert "  got:      an exception (below)" in text and "got:      None" not in text
    assert "  expected: [0.0, 0.0]" in text  # the ground truth had a value: it is shown
    trace = text.split("  traceback:\n", 1)[1]
    assert trace.lstrip().startswith('File "<cwm_model>"') and "get_rewards" in trace
    assert "cwm/" not in trace and "KeyError: 'boom'" in trace


def test_a_library_frame_the_model_called_stays_after_its_own():
    trajs = trajectories.collect("tic_tac_toe", n=1, seed=0)
    report = checks.run_checks(_raising_model('json.loads("{")'), trajs, max_failures_per_type=1)
    trace = next(f for f in report.failures if f.test_type == "rewards").traceback
    assert trace.startswith('  File "<cwm_model>"') and "json" in trace and "JSONDecodeError" in trace


def _model_from(source: str) -> model.WorldModel:
    return model.WorldModel(load_source(source), codec=model.ActionCodec.from_game(
        games.load_game("tic_tac_toe")), name="edited")


def test_a_failure_shows_the_real_games_view_and_the_models_state_where_it_fails():
    trajs = trajectories.collect("tic_tac_toe", n=2, seed=0)
    # a model that pays nothing: its rewards fail at the last move of a won game
    source = MODEL.read_text().replace("def get_rewards(state):\n", "def get_rewards(state):\n    return [0.0, 0.0]\n", 1)
    report = checks.run_checks(_model_from(source), trajs, max_failures_per_type=1)
    (failure,) = [f for f in report.failures if f.test_type == "rewards"]
    game = trajs[failure.trajectory]
    # get_rewards reads the state after the step's action: the view shown is the one after it
    after = game.steps[failure.step + 1].observations if failure.step + 1 < len(game.steps) \
        else game.final_observations
    assert failure.observed == list(after)
    text = failure.render()
    assert f"game {failure.trajectory + 1}, step {failure.step}:" in text
    assert "the real game's observation here (the same for every player): " in text
    state_line = next(line for line in text.splitlines() if line.startswith("  your model's state here: "))
    assert state_line.count('"x"') == sum(cell == "x" for cell in after[0]["board"])


def test_an_observation_failure_shows_the_state_but_not_the_expected_view_twice():
    trajs = trajectories.collect("tic_tac_toe", n=1, seed=0)
    source = MODEL.read_text().replace("def get_observations(state):\n",
                                       "def get_observations(state):\n    return [{}, {}]\n", 1)
    report = checks.run_checks(_model_from(source), trajs, max_failures_per_type=1)
    (failure,) = [f for f in report.failures if f.test_type == "observations"]
    text = failure.render()
    assert failure.observed is None and "the real game's observation" not in text
    assert "your model's state here: {" in text


def test_each_frame_quotes_its_own_modules_line_whatever_was_loaded_since_under_that_name():
    """In this process several modules may share a name (two candidates, two bundles of one game): each
    traceback quotes the lines of the module that raised, as a sandbox child does, never another's."""
    first = load_source("def f():\n    x = 1\n    raise ValueError('first')\n", api=())
    load_source("def f():\n    raise ValueError('second')\n\n\n", api=())  # same name, loaded later
    try:
        first.f()
    except ValueError as e:
        text = model.model_traceback(e)
    assert 'File "<cwm_model>", line 3, in f\n    raise ValueError(\'first\')' in text, text
    assert "second" not in text


def test_a_line_break_python_does_not_count_does_not_shift_the_quoted_line():
    """A string with U+2028 or a form feed is one line to the compiler (str.splitlines would split it)."""
    source = "X = 'a\u2028b\x0cc'\n\ndef f():\n    raise ValueError('here')\n"
    module = load_source(source, api=())
    try:
        module.f()
    except ValueError as e:
        text = model.model_traceback(e)
    assert "line 4, in f\n    raise ValueError('here')" in text, text
