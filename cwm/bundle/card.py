"""A loaded bundle as a notebook shows it (``Bundle._repr_html_``): its accuracy with the quantity named,
its provenance, its load checks and its code in collapsed blocks.

Every field of a manifest is the bundle author's text (nothing checks most of them), so every value goes
through ``cwm.display``: shown as text, never as markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cwm import display
from cwm.bundle.files import provenance_seal

if TYPE_CHECKING:
    from cwm.bundle.load import Bundle

# The provenance fields shown, in order (the accuracies have their own table).
PROVENANCE_SHOWN = ("llm", "answered_by", "relay", "date", "strategy", "seed", "solved", "llm_calls", "cost_usd")


def quantity(bundle: Bundle) -> str:
    """What the synthesis accuracies of ``bundle`` measured: a joint synthesis (closed deck: the model and
    its inference written together, ``inference.py`` kept and no separate inference run) is scored by the
    inference checks; any other by the world model's transition checks."""
    prov: Any = bundle.manifest.get("provenance")
    joint = "inference.py" in bundle.sources and not (isinstance(prov, dict) and "inference" in prov)
    return ("inference accuracy (joint: world model and inference, closed deck)" if joint
            else "transition accuracy (world model)")


def html(bundle: Bundle) -> str:
    """The bundle's display: game, accuracy at synthesis with its quantity, the load checks, provenance
    (and whether a hash covers it) and each code file, collapsed."""
    m = bundle.manifest
    prov: Any = m.get("provenance") if isinstance(m.get("provenance"), dict) else {}
    accuracy = [[quantity(bundle), "at synthesis", display.number(prov.get("train_accuracy")),
                 display.number(prov.get("test_accuracy"))]]
    inference: Any = prov.get("inference")
    if isinstance(inference, dict):
        accuracy.append(["inference accuracy (inference)", "at synthesis",
                         display.number(inference.get("train_accuracy")),
                         display.number(inference.get("test_accuracy"))])
    loads = [("world model", bundle.check_report), ("inference", bundle.inference_report),
             ("value", bundle.value_report)]
    parts = [
        display.heading(f"bundle for {bundle.game} (ground truth {m.get('ground_truth')})"),
        display.paragraph(f"{bundle.path}; format {m.get('bundle_format')}, cwm {m.get('cwm_version')}, "
                          f"created {m.get('created_at')}"),
        display.table(["quantity", "when", "train", "held-out test"], accuracy),
        display.table(["load check", "result"], [[name, report.summary().splitlines()[0]]
                                                 for name, report in loads if report is not None]),
        display.heading("provenance", level=5),
        display.fields([(key, prov[key]) for key in PROVENANCE_SHOWN if key in prov]
                       + [("provenance hash", provenance_seal(m))]),
    ]
    parts += [display.collapsed(f"{name} ({len(source.splitlines())} lines)", source)
              for name, source in sorted(bundle.sources.items())]
    return display.block(*parts)
