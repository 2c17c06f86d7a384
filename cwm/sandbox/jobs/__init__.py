"""The job servers a sandbox child runs on untrusted code: checks, hosting a game, planning, training
environments. Imported by the zygote before it forks, so every child starts with them."""

from cwm.sandbox.jobs.check import (  # noqa: F401
    CONTRACTS,
    call,
    check_encoder,
    check_inference,
    check_world_model,
    load_contract,
    random_play,
    require,
)

__all__ = ['CONTRACTS', 'call', 'check_encoder', 'check_inference', 'check_world_model', 'load_contract', 'random_play', 'require']
