"""The JAX target: a JAX twin of a checked world model (``cwm.jax_contract``), asked for with the model's source,
the contract and the game's action-id table, and accepted only on the JAX differential equivalence check
(``cwm.sandbox.jax_equivalence``).

A candidate's check report comes from its evidence, as a fast twin's does (``cwm.synthesis.fast_target``): each
playout kind is a check type, and the first diverging step is the one failure a refinement prompt shows.
"""

from __future__ import annotations

from cwm.codec import ActionCodec
from cwm.contract import api_block
from cwm.jax_contract import constants_block, required_functions
from cwm.sandbox import Sandbox
from cwm.sandbox.checkers import Checker
from cwm.sandbox.equivalence import EquivalenceSettings, Memo
from cwm.sandbox.gate import JAX_POLICY
from cwm.sandbox.jax_equivalence import check_jax_equivalence
from cwm.synthesis.fast_target import evidence_report
from cwm.synthesis.target import PromptSet, Target, prompt_rules
from cwm.types import CHANCE, CheckReport

JAX_PROMPTS = PromptSet(system="jax/system.md", initial="jax/initial.md", refine="jax/refine.md")
FRAGMENTS = ("jax/contract.md", "jax/model.md", "sections/rules.md", "sections/code.md",
             "sections/failing_tests.md", "sections/answer.md")
CODEC_ROWS = 2000  # the most rows of the id table a prompt shows


def codec_table(codec: ActionCodec) -> str:
    """The game's action ids as a Markdown table (player actions by player, then chance outcomes), at most
    ``CODEC_ROWS`` rows, chance outcomes kept before player actions (cut first; a cut said in a row); with a
    note where the game's strings carry their id (``"<id> - ..."``), and so one id may have several strings."""
    rows = sorted(codec.to_table(), key=lambda r: (int(r[0]) == CHANCE, int(r[0]), int(r[2]), str(r[1])))  # type: ignore[arg-type]
    players = [r for r in rows if r[0] != CHANCE]
    chance = rows[len(players):]
    kept = max(CODEC_ROWS - len(chance), 0)
    lines = ["| who | action string | id |", "|---|---|---|"]
    lines += [f"| player {player} | `{text}` | {aid} |" for player, text, aid in players[:kept]]
    if len(players) > kept:
        lines.append(f"| ... | {len(players) - kept} more rows of player actions | |")
    lines += [f"| chance | `{text}` | {aid} |" for _, text, aid in chance[:CODEC_ROWS]]
    if len(chance) > CODEC_ROWS:
        lines.append(f"| ... | {len(chance) - CODEC_ROWS} more rows of chance outcomes | |")
    if codec.prefixed:
        lines.append("\nAction strings that start with `<id> - ` or `chance outcome <id>` carry their id; the rest "
                     "of such a string depends on the state, so one id may have several strings above, and the "
                     "twin is compared with the model by ids.")
    return "\n".join(lines)


def jax_checker(reference: str, codec: ActionCodec, settings: EquivalenceSettings, *, encoder: str | None = None,
                sandbox: Sandbox | None = None, memo: Memo | None = None) -> Checker:
    """Checks a candidate JAX twin of ``reference`` by the JAX differential equivalence check (always in
    sandbox children: ``sandbox``, or a fresh one per check); ``memo``: the reference's records, shared
    between checks (``cwm.sandbox.equivalence.Memo``)."""

    def check(source: str) -> CheckReport:
        return evidence_report(check_jax_equivalence(reference, source, codec=codec, encoder=encoder,
                                                     settings=settings, sandbox=sandbox, memo=memo))

    return check


def jax_target(rules: str, model_source: str, codec: ActionCodec, *, num_players: int, check: Checker,
               encoder: str | None = None, prompt_set: PromptSet = JAX_PROMPTS) -> Target:
    """The JAX target for the checked model ``model_source``.

    Args:
      rules: the game's rules text.
      model_source: the checked model (shown whole; the candidates are compared with it).
      codec: the game's action codec (its ids are the twin's; shown as a table).
      num_players: the game's players.
      check: the checker (``jax_checker``).
      encoder: the bundle's PPO encoder source, when the check compares ``observation_tensor`` with it (the
        prompt shows it whole: the twin's tensor must equal its vector); ``None``: not compared.
      prompt_set: the templates.
    """
    api = required_functions(codec.max_chance_outcomes)
    values = (f"NUM_PLAYERS = {num_players}, NUM_DISTINCT_ACTIONS = {codec.num_distinct_actions}, "
              f"MAX_CHANCE_OUTCOMES = {codec.max_chance_outcomes}")
    tensor = (_encoder_check(encoder) if encoder is not None else "; `observation_tensor` is not compared (the "
              "bundle has no observation encoder), so make it a faithful encoding of what each player observes")
    context = {
        "rules": prompt_rules(rules), "api": api_block(api).rstrip(), "constants": constants_block(),
        "values": values, "codec": codec_table(codec), "allowed_imports": JAX_POLICY.allowed_text(),
        "model": model_source.rstrip("\n"), "tensor_check": tensor,
    }
    return Target("jax", prompt_set, api, context, check, fragments=FRAGMENTS, tag="jax")


def _encoder_check(encoder: str) -> str:
    """The prompt's clause on ``observation_tensor`` when the bundle has an encoder, with the encoder shown
    whole: the twin must reproduce its vector, entry for entry, at every state (the template ends the
    sentence)."""
    return (", and each player's `observation_tensor` with the vector the bundle's observation encoder makes "
            "of that player's observation, `encode(observation(state, player), player)` with the checked "
            "model's `observation` and this encoder:\n\n"
            f"```python\n{encoder.rstrip()}\n```\n\n"
            "So `OBSERVATION_SHAPE` is `(len(vector),)`, and every entry must match the encoder's to float32 "
            "precision")


__all__ = ["JAX_PROMPTS", "codec_table", "jax_checker", "jax_target"]
