"""Generated hostile programs: classes built from names given as data, the family of the dataclass
field-name injection (a field named ``x,(PAYLOAD)))#`` turns a generated ``__hash__`` into code).

Each variant is one constructor and one spelling of how the payload's name reaches it: written into
``__annotations__`` in a class body, passed as a keyword, put in a namespace handed to a metaclass (called
directly, through an alias, through a metaclass a module view exports), given to a functional
``namedtuple``/``NamedTuple``/``TypedDict``/``Enum`` as computed or literal names or through an alias of
the factory, or pasted into an existing dataclass ``Field`` by a method called with the field as ``self``.
The payload, once it runs, walks ``().__class__.__base__.__subclasses__()`` to the real builtins, reads
``GEMINI_API_KEY`` (a sentinel in these tests) and writes it to a marker file in /tmp that the suite looks
for (``harness.markers``).

The program is the reference tic-tac-toe model with the attack at the end of its module body, so every
path that loads it (the gate, the in-process loader, a sandbox child, a trusted bundle, a PPO encoder)
meets the attack before any contract function is called.
"""

from __future__ import annotations

import dataclasses

from .programs import REFERENCE

# The code the injected name smuggles into the generated method, as a string constant of the program.
_WALK = ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]()"
         "._module.__builtins__")
_PAYLOAD = ("(lambda b: b['open']('/tmp/cwm-sleeper-builders-MARK', 'w').write("
            "b['__import__']('os').environ.get('GEMINI_API_KEY', 'no key')))(" + _WALK + ")")
_PRELUDE = f"""
# ---- the attack
from dataclasses import dataclass, fields
import collections
import collections.abc
import enum
import typing

PAYLOAD = {_PAYLOAD!r}
NAME = "x,(" + PAYLOAD + ")))#"  # closes the generated tuple and hash() call, comments out the rest
U = "_" * 2
ANNOTATIONS = U + "annotations" + U  # a dunder key the gate cannot read in the source

class C:
    pass
"""
_HASHED = "dataclass(init=False, repr=False, eq=False, unsafe_hash=True)"
_NAMESPACE = "ns = {ANNOTATIONS: {'y': int, 'x': int, NAME: int}, 'x': 0, 'y': 0}\n"
_TRIGGER = "\nhash(P())\n"


@dataclasses.dataclass(frozen=True)
class Variant:
    """One generated attack: its id, the code after the prelude, and where it is stopped: ``rule`` (the
    gate's rule id that refuses it) or, for a spelling no static rule can see, ``runtime`` (the text of the
    runtime barrier's refusal, ``cwm.sandbox.builders``)."""

    name: str
    body: str
    rule: str = ""
    runtime: str = ""

    @property
    def source(self) -> str:
        """The program, whose payload writes ``marker`` (a file the suite watches for)."""
        return self.writing(self.marker)

    @property
    def marker(self) -> str:
        return f"/tmp/cwm-sleeper-builders-{self.name}"

    def writing(self, marker: str) -> str:
        """The program with its payload writing ``marker`` instead (a file no other test watches, for the
        test that lets the payload run)."""
        prelude = _PRELUDE.replace("'/tmp/cwm-sleeper-builders-MARK'", repr(marker))
        return f"{REFERENCE}\n{prelude}\n{self.body}"


def _dataclass_variants() -> list[Variant]:
    """The dataclass code generator, reached by every spelling of a field name."""
    return [
        Variant("dataclass-annotations-subscript", f"@{_HASHED}\nclass P:\n    y: int = 0\n    x: int = 0\n"
                f"    __annotations__[NAME] = int\n{_TRIGGER}", rule="dunder-name"),
        Variant("dataclass-annotations-update", f"@{_HASHED}\nclass P:\n    y: int = 0\n    x: int = 0\n"
                f"    __annotations__.update({{NAME: int}})\n{_TRIGGER}", rule="dunder-name"),
        Variant("dataclass-annotations-keyword", "ns = dict(__annotations__={NAME: int}, x=0, y=0)\n"
                f"P = {_HASHED}(type(C)('P', (), ns))\n{_TRIGGER}", rule="dunder-name"),
        Variant("dataclass-metaclass-direct", f"{_NAMESPACE}P = {_HASHED}(type(C)('P', (), ns))\n{_TRIGGER}",
                rule="metaclass-call"),
        Variant("dataclass-metaclass-alias", f"{_NAMESPACE}meta = type(C)\nP = {_HASHED}(meta('P', (), ns))\n"
                f"{_TRIGGER}", runtime="a class built by calling type"),
        Variant("dataclass-metaclass-of-abc", "class Sized(collections.abc.Sized):\n    def __len__(self):\n"
                f"        return 0\n\n{_NAMESPACE}meta = type(Sized)\n"
                f"P = {_HASHED}(meta('P', (), ns))\n{_TRIGGER}", runtime="a class built by calling ABCMeta"),
        Variant("dataclass-metaclass-from-view", f"{_NAMESPACE}P = {_HASHED}(typing.ABCMeta('P', (), ns))\n"
                f"{_TRIGGER}", runtime="a class built by calling ABCMeta"),
        Variant("dataclass-field-renamed", "@dataclass\nclass Base:\n    x: int = 0\n\nclass Renamer:\n"
                "    def rename(self, name):\n        self.name = name\n\n"
                "Renamer.rename(fields(Base)[0], NAME)\n\n"
                f"@{_HASHED}\nclass P(Base):\n    y: int = 0\n{_TRIGGER}",
                runtime="would be pasted into generated code"),
        Variant("dataclass-make-dataclass", "from dataclasses import make_dataclass\n"
                "P = make_dataclass('P', [NAME])\n", rule="forbidden-attribute"),
    ] + _flipping_name_variants() + _origin_variants()


# How the flipping name is put on an inherited field while the subclass's fields are being collected (after
# the field is stored under its plain name): a property chained through classmethod as a field's default
# runs when dataclasses reads the default, with the class as its argument.
_TRIGGERS = {
    "function": ("def trigger(cls):\n    Renamer.rename(F, Evil('x'))\n    return 0\n", "trigger"),
    "lambda": ("trigger = lambda cls: Renamer.rename(F, Evil('x'))\n", "trigger"),
    "method": ("class Hook:\n    def trigger(cls):\n        Renamer.rename(F, Evil('x'))\n        return 0\n",
               "Hook.trigger"),
}
# How the program holds the inherited field it renames.
_FIELD_REACH = {
    "fields": "F = fields(Base)[0]\n",
    "module-fields": "import dataclasses\nF = dataclasses.fields(Base)[0]\n",
    "filtered": "F = [f for f in fields(Base) if f.name == 'x'][0]\n",
}


def _flipping_name_variants() -> list[Variant]:
    """A field name that is a ``str`` subclass whose ``__str__`` renames the field back to a plain name and
    returns the payload's name: whatever reads the field's name before the generated source is compiled
    sees a plain identifier, and the source holds the payload."""
    found = []
    for trigger, (define, call) in _TRIGGERS.items():
        for reach, held in _FIELD_REACH.items():
            body = ("@dataclass\nclass Base:\n    x: int = 0\n\nclass Renamer:\n    def rename(self, name):\n"
                    f"        self.name = name\n\n{held}\nclass Evil(str):\n    def __str__(self):\n"
                    f"        Renamer.rename(F, 'x')\n        return NAME\n\n{define}\n"
                    f"@{_HASHED}\nclass P(Base):\n    y: int = classmethod(property({call}))\n{_TRIGGER}")
            found.append(Variant(f"dataclass-flipping-name-{trigger}-{reach}", body, runtime="generated code"))
    return found


# Spellings that reach the real ``type`` through ``typing``: an alias's origin, or a base whose
# ``__mro_entries__`` is ``type`` (the class statement then makes a metaclass).
_ORIGINS = {
    "get-origin": ("T = typing.get_origin(typing.Type[int])\n", "a class built by calling type"),
    "get-origin-bare": ("T = typing.get_origin(typing.Type)\n", "a class built by calling type"),
    "get-origin-alias": ("from typing import get_origin, Type\norigin = get_origin\nT = origin(Type[int])\n",
                         "a class built by calling type"),
    "get-args-nested": ("T = typing.get_origin(typing.get_args(typing.List[typing.Type[int]])[0])\n",
                        "a class built by calling type"),
    "get-args-list": ("T = typing.get_args(typing.Callable[[typing.get_origin(typing.Type[int])], int])[0][0]\n",
                      "a class built by calling type"),
    "subclass-alias": ("class T(typing.Type[int]):\n    pass\n", "derives from type"),
    "subclass-bare": ("class T(typing.Type):\n    pass\n", "derives from type"),
}


def _origin_variants() -> list[Variant]:
    """The real ``type`` reached through ``typing``, then called with the payload's namespace."""
    return [Variant(f"dataclass-origin-{name}", f"{reach}{_NAMESPACE}P = {_HASHED}(T('P', (), ns))\n{_TRIGGER}",
                    runtime=why) for name, (reach, why) in _ORIGINS.items()] + [
        Variant("origin-dunder-namespace", "T = typing.get_origin(typing.Type[int])\n"
                "K = T('K', (), {U + 'getattr' + U: print, U + 'del' + U: print})\n",
                runtime="a class built by calling type"),
    ]


# The functional factories: (name, how the program reaches it, a names argument with the payload's name).
_FACTORIES = [
    ("namedtuple", "collections.namedtuple", "['y', NAME]"),
    ("NamedTuple", "typing.NamedTuple", "[('y', int), (NAME, int)]"),
    ("TypedDict", "typing.TypedDict", "{'y': int, NAME: int}"),
    ("Enum", "enum.Enum", "{'y': 1, U + 'del' + U: print}"),
    ("IntEnum", "enum.IntEnum", "['y', NAME]"),
    ("Flag", "enum.Flag", "['y', NAME]"),
]


def _factory_variants() -> list[Variant]:
    """Each functional factory with its names computed, written literally but not plain, or reached through
    an alias (of the name, of the module attribute)."""
    found = []
    for factory, dotted, names in _FACTORIES:
        module = dotted.split(".")[0]
        found += [
            Variant(f"{factory}-computed-names", f"names = {names}\nP = {dotted}('P', names)\n",
                    rule="class-from-names"),
            Variant(f"{factory}-names-keyword", f"P = {dotted}('P', {_keyword(factory)}=list({names}))\n",
                    rule="class-from-names"),
            Variant(f"{factory}-literal-not-plain", f"P = {dotted}('P', ['y', 'x,(0)))#'])\n",
                    rule="class-from-names"),
            Variant(f"{factory}-alias", f"from {module} import {factory}\nmake = {factory}\n"
                    f"P = make('P', {names})\n", rule="class-factory-value"),
            Variant(f"{factory}-attribute-alias", f"make = {dotted}\nP = make('P', {names})\n",
                    rule="class-factory-value"),
        ]
    found.append(Variant("NamedTupleMeta-from-view", "ns = {ANNOTATIONS: {'y': int, NAME: int}}\n"
                         "P = typing.NamedTupleMeta('P', (), ns)\n", runtime="a class built by calling NamedTupleMeta"))
    found.append(Variant("EnumType-dunder-method", "class Base(enum.Enum):\n    pass\n\n"
                         "ns = {U + 'del' + U: print}\nP = enum.EnumType('P', (Base,), ns)\n",
                         runtime="a class built by calling EnumType"))
    found.append(Variant("Enum-subclass-functional", "class Base(enum.Enum):\n    pass\n\n"
                         "P = Base('P', {U + 'del' + U: print})\n", runtime="enum member name '__del__'"))
    found.append(Variant("Enum-subclass-create-as-self", "class Base(enum.Enum):\n    pass\n\nclass Maker:\n"
                         "    def make(self, names):\n        return self._create_('P', names)\n\n"
                         "P = Maker.make(Base, {U + 'del' + U: print})\n", runtime="enum member name '__del__'"))
    return found


def _keyword(factory: str) -> str:
    return {"namedtuple": "field_names", "NamedTuple": "fields", "TypedDict": "fields"}.get(factory, "names")


VARIANTS = _dataclass_variants() + _factory_variants()
RUNTIME_ONLY = [v for v in VARIANTS if v.runtime]
