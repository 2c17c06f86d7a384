# %% [markdown]
# # cwm quickstart: a code world model from synthesis to the arena
#
# This script is written as notebook cells (`# %%`): run it whole with `python examples/quickstart.py`,
# or cell by cell in VS Code / Jupyter (jupytext). It works offline: the synthesis replays the
# recorded session that ships with cwm (a real model's replies, recorded through the batch client; see the
# README). Set `LLM = "gemini"` (with
# GEMINI_API_KEY) to synthesize live instead. Everything is written under `WORK` (default
# `runs/quickstart`, or the environment variable `CWM_QUICKSTART_DIR`).

# %%
import os
from pathlib import Path

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts as openspiel_mcts

from cwm import arena, bundle, pipeline
from cwm.agents import bundle_move
from cwm.agents.specs import Settings
from cwm.arena import report as arena_report
from cwm.arena.plan import TournamentPlan
from cwm.llm import PROVENANCE_FILE, client_provenance, make_client, write_provenance
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.text import counted
from planners import MCTS, SearchConfig

GAME = "tic_tac_toe"
LLM = pipeline.resolve_llm("auto", GAME)  # Gemini when GEMINI_API_KEY is set, else the recorded session
WORK = Path(os.environ.get("CWM_QUICKSTART_DIR", "runs/quickstart"))
print(f"game: {GAME}; LLM: {LLM}; writing under {WORK}")

# %% [markdown]
# ## 1. Synthesize a world model and export it as a bundle
#
# `synthesize_world_model` records 5 random games, asks the LLM for a model of the rules, checks it
# against those games and refines it until every check passes. Re-running resumes from the run
# directory (no LLM call is repeated). `provenance.json` says who answered and how the texts travelled;
# `export_run` writes the best program as a bundle, with that provenance in its manifest.

# %%
run_dir = WORK / "synthesis"
llm = make_client(LLM, run_dir=run_dir)
result = synthesize_world_model(GAME, llm, SynthesisSettings.of("world_model", num_test=4), run_dir=run_dir)
write_provenance(run_dir / PROVENANCE_FILE, client_provenance(llm))  # who answered, for the bundle's manifest
print(f"solved: {result.solved} after {counted(result.llm_calls, 'LLM call')}; "
      f"train accuracy {result.train_accuracy:.3f}, test accuracy {result.test_accuracy:.3f}")
bundle_dir = WORK / "bundle"
if not (bundle_dir / "manifest.json").is_file():
    bundle.export_run(run_dir, bundle_dir)

# %% [markdown]
# ## 2. Load the bundle and look inside
#
# `load_bundle` checks every file's hash, runs the static gate on the code and replays the stored
# training games and a few random games through the model in the sandbox before handing it out.

# %%
b = bundle.load_bundle(bundle_dir)
provenance = b.manifest["provenance"]
print(f"bundle for {b.game}, written by {provenance.get('answered_by', provenance['llm'])} in {counted(provenance['llm_calls'], 'call')}")
print(f"accuracy at synthesis: train {provenance['train_accuracy']:.3f}, test {provenance['test_accuracy']:.3f}")
print(f"load check: {b.check_report.summary(quantity='transition accuracy (world model)').splitlines()[0]}")
code = b.sources["model.py"].splitlines()
print(f"model.py: {len(code)} lines; the first 15:")
print("\n".join("    " + line for line in code[:15]))
print("it defines: " + ", ".join(line[4:].split("(")[0] for line in code if line.startswith("def ")))

# %% [markdown]
# ## 3. Plan with the model
#
# A loaded bundle is contained: its code (written by an LLM, or by whoever shared it) runs only in a
# hardened worker process, with no API keys, no network and no file writes. `bundle_move(b, state)` asks such a
# worker for the CWM agent's move at a real game state.

# %%
real = pyspiel.load_game(GAME).new_initial_state()
move = bundle_move(b, real, SearchConfig(num_simulations=200, rollouts=2), seed=0)
print(f"the CWM agent (in its worker) opens with {real.action_to_string(0, move)}")

# %% [markdown]
# For code you have read, `trusted=True` also loads the model into this process: its states are shaped
# like `pyspiel.State`, so `planners.MCTS` searches the synthesized rules exactly as it would the real
# game, and the bundle registers as an OpenSpiel game for OpenSpiel's own algorithms.

# %%
mine = bundle.load_bundle(bundle_dir, trusted=True)
state = mine.model.new_initial_state()
planner = MCTS(SearchConfig(num_simulations=200, rollouts=2), seed=0)
for _ in range(4):
    player = state.current_player()
    action = planner.step(state)
    print(f"player {player} plays {state.action_to_string(player, action)}")
    state.apply_action(action)
print(f"the model's board after 4 moves: {state}")

# %%
game = mine.as_openspiel_game()
bot = openspiel_mcts.MCTSBot(game, 2.0, 100, openspiel_mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)),
                             random_state=np.random.RandomState(0))
first = game.new_initial_state()
print(f"OpenSpiel's MCTSBot on {game.get_type().short_name} ({game.num_distinct_actions()} actions) opens with "
      f"{first.action_to_string(0, bot.step(first))}")

# %% [markdown]
# ## 4. A small arena in the real game
#
# The CWM agent plans on the bundle's model but plays in the real (OpenSpiel) game, against a random
# player, in both seats. Use `cwm run` or `experiments/arena_figure.py` for the paper-sized version.

# %%
cwm_agent = f"cwm=cwm:{bundle_dir}"  # NAME=SPEC: the agent is labelled `cwm` in every table
results = arena.tournament(GAME, [cwm_agent, "random"], TournamentPlan(matches=3, settings=Settings(search=SearchConfig(num_simulations=100, rollouts=2)), seed=0), out_dir=WORK / "arena", executor="inline", progress=False)
rows = [r for r in arena_report.summarize(results) if r["agent"] == "cwm"]
print(arena_report.markdown(rows, outcome="win/draw/loss"))
pooled = next(r for r in rows if r["seat"] == "all")
print(f"CWM agent vs random over {pooled['matches']} matches: {pooled['wins']} wins, {pooled['draws']} draws, "
      f"{pooled['losses']} losses")
