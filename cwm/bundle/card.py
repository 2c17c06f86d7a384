"""A loaded bundle as a notebook shows it (``Bundle._repr_html_``): its accuracy with the quantity named,
its provenance, its load checks and its code in collapsed blocks.

Every field of a manifest is the bundle author's text (nothing checks most of them), so every value goes
through ``cwm.text.html_text``: shown as text, never as markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cwm.bundle.files import provenance_seal
from cwm.text import (
    html_block,
    html_collapsed,
    html_fields,
    html_heading,
    html_number,
    html_paragraph,
    html_table,
)

if TYPE_CHECKING:
    from cwm.bundle.load import Bundle

# The provenance fields shown, in order (the accuracies have their own table).
PROVENANCE_SHOWN = ("llm", "answered_by", "relay", "date", "strategy", "seed", "solved", "llm_calls", "cost_usd")


JOINT, WORLD_MODEL = "joint", "world_model"
"""The synthesis targets whose program a bundle's ``model.py`` can be (``exported_target``)."""


def exported_target(bundle: Bundle) -> str:
    """The synthesis target whose best program ``bundle`` holds: ``JOINT`` (a closed-deck run: one module
    written as both ``model.py`` and ``inference.py``, its accuracies the inference checks' rates) or
    ``WORLD_MODEL`` (its accuracies the transition checks'). ``cwm inspect``, ``cwm export`` and the display
    all ask this.

    Read from ``provenance.target``, which ``cwm export`` records from the run; a bundle without it (exported
    by an older cwm) is joint when its ``inference.py`` is the very text of its ``model.py`` (what an export
    of a joint run writes), so an ``inference.py`` added by hand, or exported from an open-deck inference
    run, does not make it one.
    """
    prov: Any = bundle.manifest.get("provenance")
    recorded = prov.get("target") if type(prov) is dict else None
    if type(recorded) is str:
        return JOINT if recorded == JOINT else WORLD_MODEL
    return JOINT if bundle.sources.get("inference.py") == bundle.sources["model.py"] else WORLD_MODEL


def quantity(bundle: Bundle) -> str:
    """What the synthesis accuracies of ``bundle`` measured (``exported_target``): a joint synthesis (closed
    deck: the model and its inference written together) is scored by the inference checks; any other by the
    world model's transition checks."""
    return ("inference accuracy (joint: world model and inference, closed deck)" if exported_target(bundle) == JOINT
            else "transition accuracy (world model)")


def html(bundle: Bundle) -> str:
    """The bundle's display: game, accuracy at synthesis with its quantity, the load checks, provenance
    (and whether a hash covers it) and each code file, collapsed."""
    m = bundle.manifest
    prov: Any = m.get("provenance") if isinstance(m.get("provenance"), dict) else {}
    accuracy = [[quantity(bundle), "at synthesis", html_number(prov.get("train_accuracy")),
                 html_number(prov.get("test_accuracy"))]]
    inference: Any = prov.get("inference")
    if isinstance(inference, dict):
        accuracy.append(["inference accuracy (inference)", "at synthesis",
                         html_number(inference.get("train_accuracy")),
                         html_number(inference.get("test_accuracy"))])
    loads = [("world model", bundle.check_report), ("inference", bundle.inference_report),
             ("value", bundle.value_report)]
    parts = [
        html_heading(f"bundle for {bundle.game} (ground truth {m.get('ground_truth')})"),
        html_paragraph(f"{bundle.path}; format {m.get('bundle_format')}, cwm {m.get('cwm_version')}, "
                          f"created {m.get('created_at')}"),
        html_table(["quantity", "when", "train", "held-out test"], accuracy),
        html_table(["load check", "result"], [[name, report.summary().splitlines()[0]]
                                                 for name, report in loads if report is not None]),
        html_heading("provenance", level=5),
        html_fields([(key, prov[key]) for key in PROVENANCE_SHOWN if key in prov]
                       + [("provenance hash", provenance_seal(m))]),
    ]
    parts += [html_collapsed(f"{name} ({len(source.splitlines())} lines)", source)
              for name, source in sorted(bundle.sources.items())]
    return html_block(*parts)
