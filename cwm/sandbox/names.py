"""The names the sandbox allows or refuses in candidate code, shared by the static gate and the runtime layers.

The gate (``cwm.sandbox.gate``) refuses these names in the source; the runtime layers (``cwm.sandbox.imports``,
``cwm.sandbox.layers``) enforce the same lists on what candidate code can reach, so that a way past the gate
still meets them.
"""

from __future__ import annotations

import _string  # the parser str.format itself uses
import keyword
from collections.abc import Iterator
from dataclasses import dataclass

ALLOWED_IMPORTS = frozenset({
    "math", "random", "itertools", "functools", "collections", "copy", "json", "re", "dataclasses", "typing",
    "enum", "heapq", "bisect", "string", "numpy",
})
# Dotted imports are allowed only for these submodules (the rest of numpy includes file I/O and ctypes).
ALLOWED_SUBMODULES = frozenset({"collections.abc", "numpy.random", "numpy.linalg"})

FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "__builtins__", "input",
    "breakpoint", "getattr", "setattr", "delattr", "memoryview", "exit", "quit", "help", "__loader__",
    "__spec__", "__build_class__", "copyright", "credits", "license",
})
# Attribute names refused on any object: modules that allowed modules re-export (``typing.sys``,
# ``enum.bltns`` is builtins, ``dataclasses.types``, ``json.codecs`` has ``open``), frame and code internals,
# numpy's file I/O and foreign-function entry points, process and environment access, and the library
# functions that turn strings into attribute walks or evaluated code (``string.Formatter().get_field``,
# ``typing.get_type_hints`` on string annotations), and what can swallow the time-budget interrupt
# (``typing.contextlib``'s ``ExitStack``/``suppress``, ``make_dataclass`` namespaces that add ``__del__``).
FORBIDDEN_ATTRIBUTES = frozenset({
    "sys", "os", "builtins", "bltns", "subprocess", "importlib", "ctypes", "socket", "signal", "threading",
    "gc", "inspect", "shutil", "pathlib", "io", "posix", "marshal", "pickle", "types", "codecs", "copyreg",
    "operator", "warnings", "ast", "stride_tricks", "npyio", "core", "extbuild",
    "Formatter", "get_field", "get_type_hints", "ForwardRef", "evaluate_forward_ref",
    "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace", "tb_frame", "tb_next", "gi_frame",
    "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "co_code", "co_consts",
    "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt", "fromfile", "tofile",
    "memmap", "fromregex", "DataSource", "ctypeslib", "lib", "f2py", "distutils", "testing", "dump",
    "system", "popen", "environ", "getenv", "putenv", "mro", "contextlib", "make_dataclass",
    # Helpers that read or write attributes, evaluate strings or write module globals on the caller's behalf:
    # ``operator.attrgetter`` and friends; ``functools.update_wrapper``/``wraps`` (``updated=['__globals__']``
    # merges a function's module globals into any dict); ``singledispatch().register`` evaluates string
    # annotations; ``ForwardRef._evaluate`` evaluates its string with the real builtins; ``Enum._convert_``
    # reads any module's globals by name and ``enum.global_enum`` writes into them; ``numpy.test`` runs pytest.
    "attrgetter", "itemgetter", "methodcaller", "update_wrapper", "wraps", "singledispatch",
    "singledispatchmethod", "_evaluate", "_convert_", "global_enum", "test",
    # Cython functions (all of numpy.random) spell their dunders without underscores: ``func_globals`` is
    # the module's globals, whose ``__builtins__`` is the real builtins module; cells hold closed-over values.
    "func_globals", "func_code", "func_closure", "func_dict", "cell_contents",
    # numpy.random bit generators hand out ctypes and cffi views of their C state (raw pointers).
    "_ctypes", "cffi", "_cffi",
})
# What a JAX twin (``cwm.jax_contract``) may not reach besides ``FORBIDDEN_ATTRIBUTES``: everything in jax that
# calls back into Python on the host or moves data to or from it (callbacks, debug printing, infeed/outfeed,
# host_callback, experimental APIs), saving and loading arrays, and jax's global configuration.
JAX_FORBIDDEN_ATTRIBUTES = frozenset({
    "io_callback", "pure_callback", "callback", "host_callback", "debug", "experimental", "infeed", "outfeed",
    "save", "savez", "load", "fromfile", "tofile", "config", "device_put", "device_get", "make_array_from_callback",
    "dlpack", "from_dlpack", "to_dlpack", "custom_jvp", "custom_vjp", "jit", "pmap", "xla_computation",
    "compilation_cache", "profiler", "distributed", "ffi", "print", "breakpoint", "platform_dependent",
    # An array's placement reaches jaxlib's XLA client (``x.device.client``: live arrays, compile, host
    # callbacks, raw pointers); its buffers, shards, tracebacks and lowering are the host's too; and
    # ``lax.rng_uniform`` is non-deterministic where the contract's step is deterministic.
    "device", "devices", "client", "live_arrays", "live_buffers", "delete", "is_deleted", "unsafe_buffer_pointer",
    "unsafe_client_pointer", "traceback", "sharding", "addressable_data", "addressable_shards", "global_shards",
    "copy_to_host_async", "on_device_size_in_bytes", "lower", "compile", "compile_and_load",
    "deserialize_executable", "dma_map", "rng_uniform", "committed", "platform", "backend",
})


@dataclass(frozen=True)
class ImportPolicy:
    """What one kind of candidate module may import, shared by the static gate and the runtime importer.

    Attributes:
      name: the policy's name (``python``: world models and their kin; ``jax``: JAX twins).
      modules: the top-level modules an import may name.
      submodules: the dotted modules an import may name.
      bare: the top-level modules importable whole (``import math``); the rest only through a submodule
        (``import jax.numpy as jnp``), and a view of them holds only those submodules.
      forbidden_attributes: attribute names refused on top of ``FORBIDDEN_ATTRIBUTES``.
    """

    name: str
    modules: frozenset[str]
    submodules: frozenset[str]
    bare: frozenset[str]
    forbidden_attributes: frozenset[str] = frozenset()

    def allowed_text(self) -> str:
        """The importable modules, as the gate's error lists them: the bare ones, and the submodules of the
        others."""
        return ", ".join(sorted(self.bare | {s for s in self.submodules if s.split(".")[0] not in self.bare}))


PYTHON_POLICY = ImportPolicy("python", ALLOWED_IMPORTS, ALLOWED_SUBMODULES, ALLOWED_IMPORTS)
JAX_POLICY = ImportPolicy("jax", frozenset({"math", "jax"}), frozenset({"jax.numpy", "jax.lax", "jax.random"}),
                          frozenset({"math"}), JAX_FORBIDDEN_ATTRIBUTES)
POLICIES = {p.name: p for p in (PYTHON_POLICY, JAX_POLICY)}

# Builtin classes whose positional ``case int(x)`` pattern binds the subject itself (no __match_args__).
SELF_MATCHING_CLASSES = frozenset({
    "int", "str", "float", "bool", "bytes", "list", "tuple", "dict", "set", "frozenset", "bytearray",
})
# The exceptions the sandbox and the in-process budget interrupt a runaway call with derive from
# BaseException; a model that names these (or catches everything) can swallow the interrupt forever.
UNCATCHABLE_NAMES = frozenset({"BaseException", "KeyboardInterrupt", "SystemExit", "GeneratorExit"})
# String constants a model may write that look like dunder names.
ALLOWED_DUNDER_STRINGS = frozenset({"__main__"})
# Drawing from the process-wide generators makes a model non-deterministic; models take a seed instead.
GLOBAL_RANDOM_FUNCTIONS = frozenset({
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform", "gauss",
    "normalvariate", "lognormvariate", "expovariate", "betavariate", "gammavariate", "paretovariate",
    "weibullvariate", "vonmisesvariate", "triangular", "getrandbits", "randbytes", "seed", "setstate",
    "binomialvariate",
})
NUMPY_GLOBAL_RANDOM_FUNCTIONS = frozenset({
    "rand", "randn", "randint", "random", "random_sample", "ranf", "sample", "choice", "shuffle", "permutation",
    "seed", "set_state", "uniform", "normal", "integers", "bytes", "binomial", "poisson", "exponential",
    "standard_normal", "beta", "gamma", "multinomial", "dirichlet", "geometric",
})
SEEDED_CONSTRUCTORS = frozenset({
    "Random", "default_rng", "RandomState", "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64", "SeedSequence",
})
# The names a method's first parameter may have to be exempt from the private-attribute rule.
SELF_NAMES = frozenset({"self", "cls"})
# Dunder names a model may define (ordinary protocol methods). Others (``__getattr__``, ``__del__``,
# ``__reduce__``, ``__init_subclass__``, ``__dataclass_fields__``, ``__class__`` ...) change how the
# interpreter or the standard library treats an object, which is how attribute rules get walked around.
ALLOWED_DUNDER_DEFINITIONS = frozenset({
    "__init__", "__post_init__", "__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
    "__ge__", "__hash__", "__len__", "__iter__", "__next__", "__getitem__", "__setitem__", "__contains__",
    "__bool__", "__call__", "__add__", "__sub__", "__mul__", "__neg__", "__slots__", "__all__",
})
# Dunder names a model may read as plain names (``if __name__ == "__main__":``). Any other (``__annotations__``
# in a class body, ``__builtins__``, ``__dict__``) hands the code the namespace the interpreter or a library
# builds a class or module from.
ALLOWED_DUNDER_NAMES = frozenset({"__name__"})
# Functional forms that build a class from names given as data: ``collections.namedtuple`` and
# ``typing.NamedTuple`` paste the names into source they compile; ``Enum`` makes them class attributes.
# A model may call them only with literal plain names, subclass them, or name them in isinstance().
CLASS_FACTORIES = frozenset({
    "namedtuple", "NamedTuple", "TypedDict", "Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum",
    "make_dataclass",
})
# The keyword a factory takes its names by (``namedtuple("P", field_names=...)``, ``Enum("E", names=...)``).
FACTORY_NAME_KEYWORDS = frozenset({"field_names", "names", "fields"})
# The str methods that read a template at run time; only literal templates are allowed (see the gate).
FORMAT_METHODS = frozenset({"format", "format_map"})


def attribute_problem(attr: str, *, exempt: bool = False, extra: frozenset[str] = frozenset()) -> str:
    """The gate rule (``cwm.sandbox.gate.RULES``) that reading attribute ``attr`` breaks, ``""`` if none.

    Args:
      attr: the attribute name.
      exempt: the object is a method's own ``self``/``cls`` (private names allowed).
      extra: more forbidden names (an ``ImportPolicy``'s ``forbidden_attributes``).
    """
    if attr.startswith("__") and attr.endswith("__"):
        return "dunder-attribute"
    if attr.startswith("_") and not exempt:
        return "private-attribute"
    if attr in FORBIDDEN_ATTRIBUTES or attr in extra:
        return "forbidden-attribute"
    return ""


def plain_name(name: object) -> bool:
    """Whether ``name`` may become a field, member or attribute name of a class built from data: an exact
    ``str`` (a subclass can lie about ``isidentifier``), an identifier, not a keyword, not a dunder name.
    Every method called here is the real ``str``'s, so a subclass's overrides never run."""
    if type(name) is not str:
        return False
    return (str.isidentifier(name) and not keyword.iskeyword(name)
            and not (str.startswith(name, "__") and str.endswith(name, "__")))


def template_problem(text: str) -> str:
    """What a ``str.format`` template reaches that source code could not (``""`` when nothing).

    A replacement field is ``name`` followed by ``.attribute`` and ``[index]`` parts, and its format spec may
    hold further fields. The argument name may be anything (it only picks an argument); every attribute must
    pass ``attribute_problem`` (no dunder, private or forbidden name) and no index key may start with ``_``.
    Fields are checked up to the first place where the text stops being a valid template (``format`` reads
    the fields before that place, then raises).
    """
    try:
        for field in _fields(text):
            _, parts = _string.formatter_field_name_split(field)
            for is_attribute, key in parts:
                rule = attribute_problem(key) if is_attribute else (
                    "private-attribute" if isinstance(key, str) and key.startswith("_") else "")
                if rule:
                    return f"the {_WHAT[rule]} {key!r} (field {{{field}}})"
    except ValueError:
        pass
    return ""


_WHAT = {"dunder-attribute": "dunder attribute", "private-attribute": "private name",
         "forbidden-attribute": "forbidden attribute"}


def _fields(template: str) -> Iterator[str]:
    for _, field, spec, _ in _string.formatter_parser(template):
        if field is not None:
            yield field
        if spec:
            yield from _fields(spec)
