"""The notebooks in examples/ run offline from top to bottom (executed with nbclient, the maintained Jupyter
runner, in a fresh kernel, in a temporary folder), and each shows what it is there to show: the rich
displays of a bundle, a check report, a tournament's standings and a posterior check."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from cwm import pipeline

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
CELL_BACKSTOP_S = 900  # wall seconds: only a hang ends a cell (a slow, loaded machine must not fail a test)

# What each notebook must show (in its printed text or its HTML displays), by file name.
SHOWN = {
    "synthesize_from_a_recording": [r"solved: True after 1 LLM call\(s\)",
                                    r"<td>transition accuracy \(world model\)</td><td>at synthesis</td><td>1\.000</td>",
                                    r"<summary>model\.py \(\d+ lines\)</summary>", r"<td>legal_actions</td>"],
    "inspect_a_bundle": [r"<p>(\d+)/\1 checks passed \(100\.0%\)", r"<td>legal_actions</td><td>\d+</td>",
                         r"failure\(s\) kept", r"refused: .*model\.py"],
    "run_an_arena": [r"tic_tac_toe: arena, 18 matches", r"<h5>leaderboard</h5>", r"<td>cwm</td><td>random</td>",
                     r"<h5>paired comparisons</h5>", r"\| cwm \| random \| all \| 6 \|"],
    "check_a_belief": [r"<td>inference accuracy \(joint: world model and inference, closed deck\)</td>",
                       r"leduc_poker \(off-policy\): posterior TV", r"opponent model: "],
}


def runner(nb: nbformat.NotebookNode, folder: Path) -> NotebookClient:
    """The client that runs ``nb`` in ``folder``, every wait of it the wall backstop: nbclient's own 4 s wait
    for a cell's last outputs (after the kernel replied) would drop late ones on a loaded machine, silently,
    and its 60 s kernel start would fail a slow one; so only a hang fails."""
    return NotebookClient(nb, timeout=CELL_BACKSTOP_S, iopub_timeout=CELL_BACKSTOP_S, raise_on_iopub_timeout=True,
                          startup_timeout=CELL_BACKSTOP_S, kernel_name="python3",
                          resources={"metadata": {"path": str(folder)}})


def test_the_runner_waits_as_long_as_the_backstop_for_every_step(tmp_path):
    client = runner(nbformat.v4.new_notebook(), tmp_path)
    assert client.timeout == client.iopub_timeout == client.startup_timeout == CELL_BACKSTOP_S
    assert client.raise_on_iopub_timeout  # a cell's output not come by then fails, never passes without it


def test_every_notebook_is_listed_and_stored_without_outputs():
    assert {nb.stem for nb in NOTEBOOKS} == set(SHOWN)
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and all(not c.outputs and c.execution_count is None for c in code), path.name


def _shown(nb: nbformat.NotebookNode) -> str:
    """Everything the executed cells printed or displayed (text, HTML and errors)."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            data = out.get("data", {})
            parts += [data.get("text/html", ""), data.get("text/plain", "")]
            if out.get("output_type") == "error":
                parts.append("\n".join(out.get("traceback", [])))
    return "\n".join(parts)


@pytest.mark.slow  # whole pipelines, about 15-90 s each on an idle machine; CI runs them (.ci/run)
@pytest.mark.timeout(1800)  # a wall backstop against a hang only: a loaded machine must not fail the test
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_the_notebook_runs_offline_and_shows_its_results(path, tmp_path, monkeypatch):
    for var in pipeline.API_KEY_VARS:  # offline: no live LLM may be reached, whatever this machine has set
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CWM_NOTEBOOK_DIR", str(tmp_path / "runs"))
    nb = nbformat.read(path, as_version=4)
    runner(nb, tmp_path).execute()
    shown = _shown(nb)
    for pattern in SHOWN[path.stem]:
        assert re.search(pattern, shown), f"{path.name} does not show {pattern!r}"
    assert "Traceback" not in shown
    assert any((tmp_path / "runs").iterdir())  # it wrote where CWM_NOTEBOOK_DIR says, not beside the notebook
