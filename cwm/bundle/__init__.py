"""Bundles: a synthesized model as a versioned directory with provenance: export, load (re-checked), files
read as untrusted input, atomic updates, and the extras a bundle may carry (value, policy, encoder). A bundle
is data: the agents that plan on one are built by ``cwm.agents`` (``bundle_agent``)."""

from cwm.bundle.card import exported_target
from cwm.bundle.checks import trajectory_hash
from cwm.bundle.export import export_bundle, export_run, run_game
from cwm.bundle.files import BUNDLE_FORMAT, BundleError
from cwm.bundle.load import Bundle, load_bundle

__all__ = ["BUNDLE_FORMAT", "Bundle", "BundleError", "export_bundle", "export_run", "exported_target", "load_bundle",
           "run_game", "trajectory_hash"]
