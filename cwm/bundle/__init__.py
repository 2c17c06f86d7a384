"""Bundles: a synthesized model as a versioned directory with provenance: export, load (re-checked),
files read as untrusted input, atomic updates, and the extras a bundle may carry (value, policy, encoder)."""

from cwm.bundle.load import (  # noqa: F401
    BUNDLE_FORMAT,
    Bundle,
    BundleError,
    export_bundle,
    export_run,
    load_bundle,
    run_game,
    trajectory_hash,
)

__all__ = ['BUNDLE_FORMAT', 'Bundle', 'BundleError', 'export_bundle', 'export_run', 'load_bundle', 'run_game', 'trajectory_hash']
