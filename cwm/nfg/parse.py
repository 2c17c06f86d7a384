"""Parsing free-text replies into structured answers (never substring matching).

Where the answer is looked for, in order:
  1. after the last ``Answer:`` / ``Final answer:`` marker;
  2. after the last decision phrase (``I would choose``, ``best response is``, ``the partner is``...);
  3. the only emphasised (``**bold**``, ``[bracketed]``, backticked) name;
  4. the only name mentioned anywhere in the reply.
Inside that span, clauses that explain rather than answer (``because...``, ``rather than...``,
``, not ...``) are cut off. Names match as whole words where a hyphen counts as part of a word, so
``conditionally-altruistic`` never matches the label ``altruistic``, and ``red`` never matches ``reddish``.
A reply where none of this finds an answer parses to None (counted as unparseable, not as wrong).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cwm.nfg.answers import AnswerKey, Reply

_MARKER = re.compile(r"(?:final\s+answer|answer)\s*(?:is\s*)?[:=]", re.I)
_CHOICE_DECISION = re.compile(
    r"\b(?:i\s*(?:would|['\u2019]d|will|['\u2019]ll|should)?\s*(?:choose|pick|select|play|go\s+with|opt\s+for|recommend)"
    r"|my\s+(?:choice|pick|answer|move)\s+(?:is|would\s+be)"
    r"|(?:you\s+)?should\s+(?:choose|pick|select|play|go\s+with)"
    r"|best\s+(?:response|reply|choice|action|option)\s+(?:is|would\s+be)"
    r"|dominant\s+(?:strategy|action|choice)\s+is|answer\s+is)\b",
    re.I,
)
# Phrases that introduce a classification; "the opponent plays red" is only a decision for labels.
_LABEL_DECISION = re.compile(
    r"\b(?:(?:the\s+)?(?:partner|opponent|other\s+player)\s+(?:is|seems\s+to\s+be|looks\s+like|plays|follows)"
    r"|(?:classify|classified)\s+(?:it|them|the\s+partner)?\s*as|most\s+likely(?:\s+type|\s+strategy)?(?:\s+is)?"
    r"|my\s+answer\s+is|answer\s+is)\b",
    re.I,
)
# Where the explanation starts inside an answer span.
_CUT = re.compile(
    r"\b(?:because|since|as\s+(?:it|this|that|they)|due\s+to|given|rather\s+than|instead\s+of|over|than"
    r"|which|whereas|while|but|although|so\s+that|if|when|between)\b|,\s*(?:not|as)\b|[;!?\n(]|(?<=[A-Za-z)*\]])\.(?=\s|$)"
    r"|\s[-\u2013\u2014]\s",
    re.I,
)
# A conclusion inside an answer span: "purple is dominated, so black" answers with what follows it.
_CONCLUSION = re.compile(r"\b(?:so|therefore|thus|hence)\b(?!\s+that)\s*[:,]?", re.I)
# A name that is the subject of a negative verdict ("purple is not dominant", "red is dominated") is not the answer.
_VERDICT_AGAINST = re.compile(
    r"\s+(?:is|are|was|would\s+be)\s+(?:not\b|never\b|n't\b|(?:strictly\s+|weakly\s+)?dominated\b|worse\b"
    r"|inferior\b|weaker\b|the\s+worst\b|a\s+mistake\b|wrong\b)|n't\b", re.I)
_EMPHASIS = re.compile(r"\*\*(.+?)\*\*|\[([^\]]+)\]|`([^`]+)`")
_NEGATION = re.compile(r"(?:\bnot|\bnon|\bnever|n't|\bno)[\s-]*$", re.I)
_NUMBER = re.compile(r"(?<![\w.])(\d+\s*/\s*\d+|\d*\.\d+|\d+)(\s*%)?(?![\w])")


def parse_reply(text: str, key: AnswerKey) -> Reply | None:
    """Parses a reply into the structured answer the key's kind asks for; None when no answer is found."""
    if key.kind == "distribution":
        return parse_distribution(text, key.vocabulary)
    if key.kind == "sequence":
        return parse_sequence(text, key.vocabulary)
    if key.kind == "choice":
        mixed = _mixed_strategy(text, key.vocabulary)
        if mixed is not None:  # "green: 0.5, black: 0.5" is a mixed strategy, not a choice: scored wrong
            return mixed
    names = parse_names(text, key.vocabulary, labels=key.kind == "label")
    return None if names is None else Reply(key.kind, names)


def _mixed_strategy(text: str, vocabulary: Sequence[str]) -> Reply | None:
    """A probability vector with more than one positive entry in the answer span (the marker span, else the
    last non-empty line), or None."""
    clean = _strip(text)
    span = _marker_span(clean)
    line = f"Answer: {span}" if span is not None else next((ln for ln in reversed(clean.splitlines()) if ln.strip()), "")
    vector = parse_distribution(line, vocabulary)
    values = [float(p) for p in vector.value] if vector is not None else []
    if sum(p > 0 for p in values) < 2 or abs(sum(values) - 1) > 0.02:
        return None
    return vector


def mentions(text: str, vocabulary: Sequence[str]) -> list[tuple[int, str]]:
    """Whole-word occurrences of the vocabulary (and its short aliases) as ``(position, name)``, in order.

    A negated mention (``not red``, ``non-random``) is dropped.
    """
    return [(s, name) for s, _, name in _mention_spans(text, vocabulary)]


def _mention_spans(text: str, vocabulary: Sequence[str]) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    for alias, name in sorted(_aliases(vocabulary).items(), key=lambda kv: -len(kv[0])):
        for m in _name_pattern(alias).finditer(text):
            if any(s < m.end() and m.start() < e for s, e, _ in found):
                continue  # inside a longer name already found
            if not _NEGATION.search(text[max(0, m.start() - 12): m.start()]):
                found.append((m.start(), m.end(), name))
    return sorted(found)


def _name_pattern(name: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.split(r"[\s_-]+", name.strip()) if w]
    body = r"[\s_-]+".join(words)
    if name.strip().isdigit():  # a numeric action name is not part of a decimal, fraction or percentage
        return re.compile(r"(?<![\w.\/-])" + body + r"(?![\w-]|\.\d|\s*%|\s*/\s*\d)", re.I)
    return re.compile(r"(?<![\w-])" + body + r"(?![\w-])", re.I)


def _aliases(vocabulary: Sequence[str]) -> dict[str, str]:
    """Each name, plus its last word when all names share the words before it (``project green`` -> ``green``)."""
    out = {name: name for name in vocabulary}
    split = [name.split() for name in vocabulary]
    if len(vocabulary) > 1 and all(len(s) > 1 for s in split) and len({" ".join(s[:-1]).lower() for s in split}) == 1:
        lasts = [s[-1] for s in split]
        if len({w.lower() for w in lasts}) == len(lasts):
            out.update({w: name for w, name in zip(lasts, vocabulary)})
    return out


def _cut(span: str) -> str:
    m = _CUT.search(span)
    return span[: m.start()] if m else span


def _answered(span: str, vocabulary: Sequence[str]) -> set[str]:
    """The names an answer span gives: after its last conclusion word when one is followed by a name, with
    explanation clauses cut off and names under a negative verdict (``purple is dominated``) dropped."""
    conclusions = [m for m in _CONCLUSION.finditer(span) if mentions(span[m.end():], vocabulary)]
    if conclusions:
        span = span[conclusions[-1].end():]
    cut = _cut(span)
    return {name for _, end, name in _mention_spans(cut, vocabulary) if not _VERDICT_AGAINST.match(cut, end)}


def _strip(text: str) -> str:
    return text.replace("**", "").replace("`", "").replace("__", "")


def _marker_span(text: str) -> str | None:
    """The text after the last answer marker (the next non-empty line if the marker ends its line)."""
    found = list(_MARKER.finditer(text))
    if not found:
        return None
    last = found[-1]
    rest = text[last.end():]
    line, _, more = rest.partition("\n")
    if line.strip(" *`\t"):
        return line
    following = [ln for ln in more.splitlines() if ln.strip()]
    return following[0] if following else ""


def parse_names(text: str, vocabulary: Sequence[str], *, labels: bool = False) -> frozenset[str] | None:
    """The set of names the reply gives as its answer (see the module docstring for where it looks).

    Args:
      text: the reply.
      vocabulary: the action names or labels that may be answered.
      labels: the names are partner labels (decision phrases are "the partner is ...", not "I choose ...").
    """
    clean = _strip(text)
    span = _marker_span(clean)
    if span is not None:  # "Answer: (blue)" has nothing before its bracket: then read the whole line
        if not mentions(_cut(span), vocabulary):
            return frozenset(n for _, n in mentions(span, vocabulary)) or None
        return frozenset(_answered(span, vocabulary)) or None
    decisions = list((_LABEL_DECISION if labels else _CHOICE_DECISION).finditer(clean))
    for d in reversed(decisions):
        found = {name for _, name in mentions(_cut(clean[d.end():]), vocabulary)}
        if found:
            return frozenset(found)
    emphasised = {name for m in _EMPHASIS.finditer(text) for _, name in mentions(next(g for g in m.groups() if g),
                                                                                 vocabulary)}
    if len(emphasised) == 1:
        return frozenset(emphasised)
    everywhere = {name for _, name in mentions(clean, vocabulary)}
    if len(everywhere) == 1:
        return frozenset(everywhere)
    leading = {name for _, name in mentions(_cut(clean.strip()), vocabulary)}  # "Red, rather than blue."
    return frozenset(leading) if len(leading) == 1 else None


def parse_sequence(text: str, vocabulary: Sequence[str]) -> Reply | None:
    """Actions in order: ``Round k: X`` items if present, else the names in the answer span in order.

    The answer span is the rest of the last marker's line, or (when that line is empty or starts a
    ``Round 1:`` list) the block under it up to the next blank line; an explanation after it never adds moves.
    """
    clean = _strip(text)
    span = _sequence_span(clean)
    rounds = _by_round(span if span is not None else clean, vocabulary)
    if rounds:
        return Reply("sequence", rounds)
    if span is None:
        lines = [ln for ln in clean.splitlines() if len(mentions(ln, vocabulary)) >= 2]
        if not lines:
            return None
        span = lines[-1]
    found = tuple(name for _, name in mentions(_cut_sentence(span), vocabulary))
    return Reply("sequence", found) if found else None


def _sequence_span(text: str) -> str | None:
    found = list(_MARKER.finditer(text))
    if not found:
        return None
    line, _, below = text[found[-1].end():].partition("\n")
    if line.strip(" *`\t") and not re.match(r"\s*round\s*1\b", line, re.I):
        return line
    block = re.split(r"\n\s*\n", (line + "\n" + below).strip("\n"), maxsplit=1)[0]
    return re.sub(r"(?m)^\s*\d+\s*[.)]\s+", "", block)  # "1. red" list numbering is not a move


def _cut_sentence(span: str) -> str:
    m = re.search(r"\b(?:because|since|this\s+is|here|matching|mirroring|copying)\b"
                  r"|(?<=[A-Za-z)\]])\.(?=\s|$)|\n\s*\n|\s[-\u2013\u2014]\s|\u2014", span, re.I)
    return span[: m.start()] if m else span


def _by_round(text: str, vocabulary: Sequence[str]) -> tuple[str, ...]:
    """``Round 1: red, Round 2: blue`` -> (red, blue) when rounds 1..n are all there, in order."""
    parts = re.split(r"\bround\s*(\d+)\b", text, flags=re.I)
    moves: dict[int, str] = {}
    for number, segment in zip(parts[1::2], parts[2::2]):
        found = mentions(_cut(segment.lstrip(" :-=)\t")), vocabulary)
        if found and int(number) not in moves:
            moves[int(number)] = found[0][1]
    if not moves or sorted(moves) != list(range(1, len(moves) + 1)):
        return ()
    return tuple(moves[k] for k in sorted(moves))


def parse_distribution(text: str, vocabulary: Sequence[str]) -> Reply | None:
    """A probability vector over ``vocabulary`` (in its order); None when an entry is outside [0, 1].

    Accepts a list of exactly ``len(vocabulary)`` numbers in the vocabulary's order (brackets optional after
    an answer marker, required elsewhere; read positionally even when the actions are numbers themselves, so
    ``(0, 0.5, 0.5)`` over actions 0, 1, 2 is a vector), ``name: p`` / ``p on name`` pairs, percentages
    (``35%``, or numbers summing to 100), fractions (``7/20``), decimals, any mix of these, and a single
    named action (a pure strategy). tests/nfg/test_nfg_forms.py holds the table of accepted forms.
    """
    clean = _strip(text)
    span = _marker_span(clean)
    candidates = [span] if span is not None else [ln for ln in reversed(clean.splitlines()) if ln.strip()]
    for candidate in candidates:
        vector = (_number_list(candidate, vocabulary, bare=span is not None) or _pairs(candidate, vocabulary)
                  or _positional(candidate, vocabulary, bare=span is not None))
        if vector is not None:
            vector = _normalise_percent(vector)
            if all(0 <= p <= 1 for p in vector):  # "3: 1 of 12, 1: 10 of 12" holds counts, not probabilities
                return Reply("distribution", vector)
    names = parse_names(text, vocabulary)
    if names is not None and len(names) == 1 and not _stray_numbers(clean if span is None else span, vocabulary):
        return Reply("distribution", tuple(1.0 if n in names else 0.0 for n in vocabulary))
    return None


def _stray_numbers(span: str, vocabulary: Sequence[str]) -> bool:
    """Whether the span holds a number that is not an action's name (``Answer: 2`` over actions 0, 1, 2 names one)."""
    named = {s for s, _ in mentions(span, vocabulary)}
    return any(m.start() not in named for m in _NUMBER.finditer(span))


def _value(number: str, percent: str | None) -> tuple[float, bool]:
    if "/" in number:
        a, b = (float(x) for x in number.split("/"))
        value = a / b if b else float("nan")
    else:
        value = float(number)
    return (value / 100.0, True) if percent else (value, False)


_AFTER = re.compile(r"\s*\)?\s*(?:[:=]|\bwith\s+probability\b|\bat\b|\bis\b|->|\u2192)?\s*", re.I)
_BEFORE = re.compile(r"\s*(?:on|for|to|of|chance\s+of|probability\s+(?:of|on))?\s*", re.I)


def _pairs(span: str, vocabulary: Sequence[str]) -> tuple[float, ...] | None:
    """Values attached to names: ``red: 0.3``, ``red = 30%``, ``P(red) = 0.3``, ``30% red``, ``0.3 on red``."""
    numbers = list(_NUMBER.finditer(span))
    values: dict[str, float] = {}
    for start, end, name in _mention_spans(span, vocabulary):
        gap = _AFTER.match(span, end)
        after = next((n for n in numbers if gap is not None and n.start() == gap.end()), None)
        before = next((n for n in reversed(numbers) if n.end() <= start and _BEFORE.fullmatch(span[n.end():start])),
                      None)
        number = after or before
        if number is not None and name not in values:
            values[name] = _value(number.group(1), number.group(2))[0]
    if not values:
        return None
    total = sum(values.values())
    if set(values) != set(vocabulary) and abs(total - 1) > 0.02 and abs(total - 100) > 2:
        return None
    return tuple(values.get(n, 0.0) for n in vocabulary)


_LIST_GAP = re.compile(r"[\s,;]*(?:and\s+)?", re.I)


def _number_list(span: str, vocabulary: Sequence[str], *, bare: bool) -> tuple[float, ...] | None:
    """A span (or, outside an answer span, a bracketed group) that holds nothing but ``len(vocabulary)`` numbers:
    read in the vocabulary's order even when the numbers are also action names (``(0, 0.5, 0.5)`` over 0, 1, 2)."""
    groups = [m.group(1) for m in re.finditer(r"[\[(]([^\[\]()]*)[\])]", span)]
    if bare:
        groups.insert(0, span.strip().rstrip(".").strip().strip("[]()"))
    for group in groups:
        numbers = list(_NUMBER.finditer(group))
        gaps = [group[a.end(): b.start()] for a, b in zip(numbers, numbers[1:])]
        if (len(numbers) == len(vocabulary) and not group[: numbers[0].start()].strip()
                and not group[numbers[-1].end():].strip() and all(_LIST_GAP.fullmatch(g) for g in gaps)):
            return tuple(_value(m.group(1), m.group(2))[0] for m in numbers)
    return None


def _positional(span: str, vocabulary: Sequence[str], *, bare: bool) -> tuple[float, ...] | None:
    """A list of numbers in the vocabulary's order; outside an answer span only inside brackets."""
    if not bare:
        bracket = re.search(r"[\[(]([^\[\]()]*)[\])]", span)
        if bracket is None:
            return None
        span = bracket.group(1)
    named = {s for s, _ in mentions(span, vocabulary)}
    numbers = [m for m in _NUMBER.finditer(span) if m.start() not in named]
    if len(numbers) != len(vocabulary):
        return None
    return tuple(_value(m.group(1), m.group(2))[0] for m in numbers)


def _normalise_percent(vector: tuple[float, ...]) -> tuple[float, ...]:
    """Numbers written as percentages without a ``%`` sign (summing to about 100) become probabilities."""
    if abs(sum(vector) - 100) <= 2 and all(v >= 0 for v in vector):
        return tuple(v / 100 for v in vector)
    return vector
