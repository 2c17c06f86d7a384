"""HAND-WRITTEN TEST FIXTURE (not LLM output): broken variants of tests/data/reference/leduc_poker_inference.py.

Each mutant is a small textual patch of the reference inference, so it differs from a known-good function by
exactly the bug it is named after. Three break reconstruction (a sampled history whose replay does not give
the player's observations and own actions); two pass every reconstruction check but sample from the
wrong posterior, which only the posterior check (cwm.checks.posterior) can see.
"""

from pathlib import Path

REFERENCE = Path(__file__).resolve().parent / "leduc_poker_inference.py"

# name -> (old text, new text, what it breaks: "reconstruction" or "posterior", a fragment of the reason
# cwm.games.hidden.replay gives for a broken history ("" for the posterior mutant, whose histories are valid))
MUTANTS = {
    # its own private card is drawn like the opponent's, from the cards it has not seen: always wrong
    "ignores_observed_card": (
        "if deals == player_id:", "if False:",
        "reconstruction", "observation differs"),
    # the opponent's card is drawn from the whole deck: now and then its own card or the public one again
    "deals_card_twice": (
        "cards = [c for c in range(6) if c not in seen]", "cards = list(range(6))",
        "reconstruction", "is not legal there"),
    # an opponent's raise is read as a call: the antes after it differ
    "wrong_betting_history": (
        '        return "Raise"', '        return "Call"',
        "reconstruction", "observation differs"),
    # always the lowest consistent card: every history valid, the belief a point mass
    "always_same_deal": (
        "card = rng.choice(cards)", "card = cards[0]",
        "posterior", ""),
    # the lowest consistent card one time in ten, else a uniform one: every history valid, the belief off by
    # a total variation of 0.1 * (1 - 1/cards) (0.075-0.08): a wrong belief too close for the default draws
    "lowest_card_one_time_in_ten": (
        "card = rng.choice(cards)", "card = cards[0] if rng.random() < 0.1 else rng.choice(cards)",
        "posterior", ""),
}


def source(name):
    """The source of mutant ``name``: the reference with its one patch applied."""
    old, new, _, _ = MUTANTS[name]
    text = REFERENCE.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise ValueError(f"mutant {name}: {old!r} occurs {text.count(old)} times in {REFERENCE.name}, not once")
    return text.replace(old, new)
