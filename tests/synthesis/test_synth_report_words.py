"""A synthesis run's summary.md and accuracy plot name what was made and what its accuracy measures (transition
accuracy of a world model, inference accuracy of an inference or joint module), and the plot's title fits."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from cwm.synthesis.report import curve_figure, summary_markdown
from cwm.synthesis.types import CurvePoint, SynthesisResult

LONG_MODEL = "gemini-2.5-pro-preview-06-05-thinking-with-a-very-long-deployment-name-as-relays-write-them"


def _result(target: str, model: str = "scripted") -> SynthesisResult:
    return SynthesisResult(
        target=target, game="leduc_poker", strategy="tree", model=model, seed=0, budget=4, best_source="",
        best_node=1, solved=False, train_accuracy=0.75, test_accuracy=0.5, train_pass_rate=0.9,
        train_by_type={"inference": 0.75}, test_by_type={"inference": 0.5}, llm_calls=2, input_tokens=1,
        output_tokens=1, thinking_tokens=0, cost_usd=0.0, wall_time_s=1.0, nodes=(),
        curve=(CurvePoint(1, 0.5, 0.25), CurvePoint(2, 0.9, 0.75)), prompt_hashes={}, run_dir="run")


@pytest.mark.parametrize(("target", "title", "quantity"), [
    ("world_model", "# Synthesis of a world model for leduc_poker", "transition accuracy (world model)"),
    ("inference", "# Synthesis of an inference function for leduc_poker", "inference accuracy (inference)"),
    ("joint", "# Synthesis of a joint world model and inference function for leduc_poker",
     "inference accuracy (joint)"),
])
def test_the_summary_and_the_plot_name_the_target_and_its_quantity(target: str, title: str,
                                                                   quantity: str) -> None:
    text = summary_markdown(_result(target))
    assert text.splitlines()[0] == title
    assert f"- {quantity}: train 0.7500, test 0.5000" in text
    if target != "world_model":  # an inference rate is never called a transition accuracy
        assert "transition acc" not in text
    fig = curve_figure(_result(target))
    try:
        labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    finally:
        plt.close(fig)
    assert labels == [quantity, "checks passed"]


def test_the_plot_title_fits_inside_the_figure_with_a_long_model_id() -> None:
    fig = curve_figure(_result("joint", model=LONG_MODEL))
    try:
        fig.canvas.draw()
        box = fig.axes[0].title.get_window_extent(fig.canvas.get_renderer())
        width, height = fig.canvas.get_width_height()
    finally:
        plt.close(fig)
    assert box.x0 >= 0 and box.x1 <= width and box.y1 <= height, (box, width, height)
