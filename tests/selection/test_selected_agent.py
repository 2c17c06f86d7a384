"""cwm-selected:DIR in the arena: each match plays one bundle that survived the selection, drawn with the match's
seed, and the match record says which."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cwm.agents.base import AgentError
from cwm.agents.fingerprint import agent_fingerprint, former_fingerprint
from cwm.agents.selected import SelectedAgent
from cwm.agents.specs import AgentSpecError, Settings, check_agent, make_agent, parse_agent_spec
from cwm.arena import tournament
from cwm.arena.plan import TournamentPlan
from planners.config import SearchConfig

QUICK = Settings(search=SearchConfig(num_simulations=20, rollouts=1))


def _selected(folder: Path, seed: int) -> SelectedAgent:
    """The agent the factory builds for ``cwm-selected:FOLDER`` on tic-tac-toe."""
    agent = make_agent(f"cwm-selected:{folder}", "tic_tac_toe", settings=QUICK, seed=seed)
    assert isinstance(agent, SelectedAgent)
    return agent


def test_each_match_plays_a_survivor_and_records_which(ttt_selection, tmp_path: Path) -> None:
    selection, _ = ttt_selection
    results = tournament("tic_tac_toe", [f"sel={selection.spec}", "random"], TournamentPlan(matches=2, settings=QUICK), out_dir=tmp_path / "arena", executor="inline", progress=False)
    picked = [r.stats[r.seats.index("sel")]["selected_bundle"] for r in results]
    assert len(picked) == 4 and set(picked) <= set(selection.survivors)
    assert all(r.forfeit_seat is None for r in results)
    paths = {r.stats[r.seats.index("sel")]["selected_path"] for r in results}
    assert paths <= {str(p) for p in selection.survivor_paths}
    # what the agent is: the selection file's hash
    labels = json.loads((tmp_path / "arena" / "labels.json").read_text())
    assert [fp for fp, label in labels.items() if label == "sel"][0].startswith("cwm-selected sha256:")


def test_the_pick_is_drawn_with_the_seed_among_the_survivors_only(ttt_selection) -> None:
    selection, _ = ttt_selection
    picks = [_selected(selection.out, s).pick.label for s in range(40)]
    assert set(picks) == {"good", "good2"}  # both drawn, the rejected one never
    assert picks == [_selected(selection.out, s).pick.label
                     for s in range(40)]


def test_a_bundle_changed_since_the_selection_forfeits(ttt_selection, tmp_path: Path) -> None:
    selection, _ = ttt_selection
    data = json.loads((selection.out / "selection.json").read_text())
    for agent in data["agents"]:
        agent["fingerprint"] = "cwm sha256:" + "0" * 64
    (tmp_path / "selection.json").write_text(json.dumps(data))
    agent = _selected(tmp_path, 0)
    with pytest.raises(AgentError, match="not the bundle that was selected"):
        agent.reset()
    assert agent.stats()["selected_bundle"] in selection.survivors


def test_a_selection_recorded_under_former_manifest_hashes_still_plays(ttt_selection, tmp_path: Path) -> None:
    """A selection written before fingerprints were content only names each bundle by its manifest's hash."""
    selection, _ = ttt_selection
    data = json.loads((selection.out / "selection.json").read_text())
    for agent in data["agents"]:
        agent["fingerprint"] = former_fingerprint(parse_agent_spec(f"cwm:{agent['path']}"))
        assert agent["fingerprint"].startswith("cwm sha256:")
    (tmp_path / "selection.json").write_text(json.dumps(data))
    agent = _selected(tmp_path, 0)
    agent.reset()  # built: the bundle is the one that was selected
    assert agent.stats()["selected_bundle"] in selection.survivors
    agent.close()


def test_a_selection_is_its_survivors_not_its_scores_or_paths(ttt_selection, tmp_path: Path) -> None:
    selection, _ = ttt_selection
    data = json.loads((selection.out / "selection.json").read_text())
    before = agent_fingerprint(parse_agent_spec(selection.spec))
    for agent in data["agents"]:
        agent["path"], agent["mean"] = "/elsewhere/" + agent["label"], -1.0
    (tmp_path / "selection.json").write_text(json.dumps(data, indent=4))
    assert agent_fingerprint(parse_agent_spec(f"cwm-selected:{tmp_path}")) == before
    data["agents"] = [dict(a, survived=a["label"] != data["survivors"][0]) for a in data["agents"]]
    (tmp_path / "selection.json").write_text(json.dumps(data))
    assert agent_fingerprint(parse_agent_spec(f"cwm-selected:{tmp_path}")) != before


def test_a_folder_without_a_usable_selection_is_refused_before_any_match(ttt_selection, tmp_path: Path) -> None:
    selection, _ = ttt_selection
    with pytest.raises(AgentSpecError, match="not a readable selection file"):
        check_agent(f"cwm-selected:{tmp_path}", "tic_tac_toe")
    with pytest.raises(AgentSpecError, match="not of 'connect_four'"):
        check_agent(selection.spec, "connect_four")
    shutil.copytree(selection.out, tmp_path / "none")
    data = json.loads((tmp_path / "none" / "selection.json").read_text())
    data["agents"] = [dict(a, survived=False) for a in data["agents"]]
    (tmp_path / "none" / "selection.json").write_text(json.dumps(data))
    with pytest.raises(AgentSpecError, match="no agent survived"):
        check_agent(f"cwm-selected:{tmp_path / 'none'}", "tic_tac_toe")
    with pytest.raises(AgentSpecError, match="needs an argument"):
        parse_agent_spec("cwm-selected")
    check_agent(selection.spec, "tic_tac_toe")
