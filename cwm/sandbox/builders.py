"""The runtime barrier behind the gate's class-building rules: names pasted into generated code, namespaces
handed to a metaclass.

The static gate refuses every spelling of these attacks it can see (``__annotations__`` as a name, a
functional ``namedtuple``/``Enum`` with computed names, ``type(C)(name, bases, ns)``), but a namespace or a
field name can be built at run time where no rule sees it: a dict key joined from pieces, a dataclass
``Field`` renamed by a method called with the field as ``self``, a ``str`` subclass whose ``__str__``
renames the field back while the generator formats it, an alias of a metaclass, a metaclass dug out of a
``typing`` alias. These checks stand where a string becomes code or a namespace becomes a class:

- ``install_codegen_guard`` adds an audit hook (once per process; hooks cannot be removed) that, when the
  standard library's code generators compile source (``dataclasses`` building ``__init__``/``__eq__``/
  ``__hash__``..., ``collections.namedtuple`` building ``__new__``), checks the names in the generator's
  frame (each an exact ``str``, an identifier, not a keyword, not a dunder name:
  ``cwm.sandbox.names.plain_name``) and then the source itself, which is what gets compiled whatever the
  names did meanwhile: it may hold only the shapes the generators write (``cwm.sandbox.generated``). No
  legitimate class fails either, so the hook applies to every caller in the process, model or not (the
  source check, on a Python other than ``VERIFIED_PYTHON``, only while model code is on the stack).
- ``checked_type`` is the ``type`` of the restricted builtins, and module views hold ``checked_metaclass``
  wrappers instead of metaclasses (``enum.EnumType``, ``typing.NamedTupleMeta``): calling one to build a
  class checks the namespace first (plain names, the ordinary protocol methods and what a ``class``
  statement itself adds; ``__annotations__`` with plain keys only). The functions of the modules that read
  classes' parts (``REFLECTING_MODULES``: ``typing.get_origin``, ``get_args``...) hand what they return
  through the same mapping (``returned_value``), and ``checked_build_class`` (the restricted builtins'
  ``__build_class__``) refuses a class statement that makes a metaclass (a base such as ``typing.Type[int]``
  whose ``__mro_entries__`` is ``type``).
- The ``enum`` view's ``Enum``, ``IntEnum``, ``Flag``... are subclasses whose metaclass checks the names of
  the functional API (``Base('E', names)`` on any enum a model defines, which no static rule can tell from
  a value lookup) and hands the standard library a plain copy of them (``view_value``).

This is a filter over the routes known to reach a code generator or a metaclass, not a sandbox: a route none
of these covers is a new bypass, contained only by a sandbox child's OS layers.
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import enum
import sys
import types
from collections.abc import Callable
from types import FrameType
from typing import Any

from cwm.sandbox.generated import make_generated_code_check
from cwm.sandbox.names import ALLOWED_DUNDER_DEFINITIONS, plain_name

__all__ = ["ABSENT", "checked_build_class", "checked_metaclass", "checked_type", "install_codegen_guard",
           "namespace_problem", "returned_value", "view_value"]

# What a ``class`` statement (``__build_class__``) puts in a namespace besides the body's own names.
CLASS_MACHINERY = frozenset({
    "__module__", "__qualname__", "__doc__", "__classcell__", "__annotations__", "__orig_bases__",
    "__firstlineno__", "__static_attributes__", "__type_params__",
})
_FRAMES_UP = 8  # a generator's compile happens a few calls below the function that holds its names
# The Python whose generators wrote the shapes ``cwm.sandbox.generated`` admits. On another version their
# output may differ, so the source check applies there only while model code (a module the loaders mark with
# ``__source__``) is on the stack: a shape it does not know then refuses a model's class, never the caller's.
VERIFIED_PYTHON = (3, 11)
_INSTALLED: list[bool] = []  # mutated, never rebound


def install_codegen_guard() -> None:
    """Adds the audit hook that checks the names the standard library's code generators paste and the source
    they compile (once per process; later calls do nothing)."""
    if not _INSTALLED:
        sys.addaudithook(_make_hook())
        _INSTALLED.append(True)


def _make_hook() -> Callable[[str, tuple[Any, ...]], None]:
    """The hook, with everything it consults bound in its closure (it reads no module global when called)."""
    process_class = dataclasses._process_class.__code__  # type: ignore[attr-defined]
    make_namedtuple = collections.namedtuple.__code__
    field_type = dataclasses.Field
    field_name = vars(dataclasses.Field)["name"].__get__  # the slot itself: a subclass's property never runs
    getframe, plain, dict_items, refused = sys._getframe, plain_name, dict.items, ValueError
    type_, dict_, tuple_, list_ = type, dict, tuple, list
    own_parse, generated = _make_source_refusal()
    everywhere = sys.version_info[:2] == VERIFIED_PYTHON

    def from_model(frame: FrameType | None) -> bool:
        while frame is not None:
            if "__source__" in frame.f_globals:
                return True
            frame = frame.f_back
        return False

    def bad_fields(fields: Any) -> object:
        if type_(fields) is not dict_:
            return fields
        for name, field in dict_items(fields):
            if not plain(name) or type_(field) is not field_type or not plain(field_name(field)):
                return name if not plain(name) else field
        return None

    def bad_names(names: Any) -> object:
        if type_(names) not in (tuple_, list_):
            return names
        for name in names:
            if not plain(name):
                return name
        return None

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "compile" or own_parse(args[0]):
            return
        frame: FrameType | None = getframe(1)
        for _ in range(_FRAMES_UP):
            if frame is None:
                return
            code, found = frame.f_code, None
            if code is process_class:
                found = bad_fields(frame.f_locals.get("fields"))
            elif code is make_namedtuple:
                found = bad_names(frame.f_locals.get("field_names"))
            if found is not None:
                raise refused(f"sandbox: a class field named {found!r} would be pasted into generated code; "
                              f"field names must be plain identifiers")
            if code is process_class or code is make_namedtuple:
                if everywhere or from_model(frame):
                    generated(args[0], "dataclasses" if code is process_class else "namedtuple")
                return
            frame = frame.f_back

    return hook


def _make_source_refusal() -> tuple[Callable[[Any], bool], Callable[[Any, str], None]]:
    """For the hook: whether a compile event is the source check's own parse, and the check of the source a
    generator is about to compile (``cwm.sandbox.generated``), refusing it with a ``ValueError``."""
    check, busy = make_generated_code_check(), list[bytes | None]()  # busy: the text being checked (mutated)
    type_, str_, bytes_, refused = type, str, bytes, ValueError

    def text(source: Any) -> bytes | None:
        """Source as bytes, as the compile event of a parse has it (``None`` for anything else)."""
        if type_(source) is str_:
            return str_.encode(source, "utf-8", "surrogatepass")
        return source if type_(source) is bytes_ else None

    def own_parse(source: Any) -> bool:
        return bool(busy) and text(source) == busy[-1]

    def generated(source: Any, who: str) -> None:
        """Refuses source a generator is about to compile that holds anything it never writes itself."""
        if type_(source) not in (str_, bytes_):
            raise refused(f"sandbox: {who} would compile a {type_(source).__name__}, not source text")
        busy.append(text(source))
        try:
            why = check(source)
        finally:
            busy.pop()
        if why:
            raise refused(f"sandbox: the generated code {who} would compile holds {why}, which it never writes "
                          f"itself (a field name that was not a plain identifier when pasted); field names must be "
                          f"plain identifiers")

    return own_parse, generated


def namespace_problem(namespace: Any) -> str:
    """Why ``namespace`` may not become a class built from run-time data (``""`` when it may).

    A name is allowed when it is plain (``plain_name``), an ordinary protocol method the gate lets a model
    define, or what a ``class`` statement adds itself; ``__annotations__`` must be a dict of plain names.
    """
    if not isinstance(namespace, dict):
        return f"the namespace is a {type(namespace).__name__}, not a dict"
    for key in list(dict.keys(namespace)):
        if not (plain_name(key) or (type(key) is str and key in ALLOWED_DUNDER_DEFINITIONS | CLASS_MACHINERY)):
            return f"the name {key!r} may not be defined from run-time data"
    annotations = dict.get(namespace, "__annotations__")
    if annotations is not None:
        if type(annotations) is not dict:
            return "__annotations__ is not a dict"
        for key in list(dict.keys(annotations)):
            if not plain_name(key):
                return f"the annotation {key!r} is not a plain identifier"
    return ""


def _make_checks() -> tuple[Callable[..., Any], Callable[[type], Callable[..., Any]]]:
    """``checked_type`` and ``checked_metaclass``, with everything they consult bound in their closures (they
    read no module global when called, so code that reached this module's dict could not switch them off)."""
    problem, real_type, is_subclass, length = namespace_problem, type, issubclass, len
    refused = TypeError

    def checked_metaclass(meta: type) -> Callable[..., Any]:
        """``meta`` as candidate code may call it: with one argument, ``checked_type``; with a name, bases and
        a namespace, the class, once ``namespace_problem`` finds nothing wrong with the namespace.

        Raises (when called):
          TypeError: the namespace defines names a model may not give a class from data.
        """
        name = real_type.__dict__["__name__"].__get__(meta)  # a metaclass's own __name__ could be anything

        def build(*args: Any, **kwargs: Any) -> Any:
            if length(args) == 1 and not kwargs:
                return checked_type(args[0])
            if length(args) == 3:
                why = problem(args[2])
                if why:
                    raise refused(f"sandbox: a class built by calling {name}: {why}")
                return meta(*args, **kwargs)
            raise refused(f"sandbox: {name} takes one argument, or a name, bases and a namespace")

        build.__name__ = build.__qualname__ = name
        return build

    def checked_type(*args: Any) -> Any:
        """The builtin ``type`` as candidate code gets it: ``type(x)`` only, and a metaclass it returns (the
        type of a class) comes back as ``checked_metaclass``, so ``type(C)(name, bases, ns)`` is checked too."""
        if length(args) != 1:
            raise refused("sandbox: type() takes one argument here; build classes with a class statement")
        found = real_type(args[0])
        return checked_metaclass(found) if is_subclass(found, real_type) else found

    return checked_type, checked_metaclass


checked_type, checked_metaclass = _make_checks()


def enum_names(names: Any) -> Any:
    """A plain copy of the names argument of the functional ``Enum`` API, checked: an exact ``str`` of names,
    or an exact list, tuple or dict of names (or of ``(name, value)`` pairs), every name plain.

    Raises:
      TypeError: another type, or a name that is not plain (the copy is what the standard library gets, so
        what was checked is what it reads).
    """
    if type(names) is str:
        copy: Any = names
        listed = str.split(str.replace(names, ",", " "))
    elif type(names) is dict:
        copy = dict(names)
        listed = list(copy)
    elif type(names) in (list, tuple):
        copy = tuple(names)
        listed = [item[0] if type(item) in (list, tuple) and len(item) == 2 else item for item in copy]
        copy = tuple(tuple(item) if type(item) in (list, tuple) else item for item in copy)
    else:
        raise TypeError(f"sandbox: enum names must be a str, list, tuple or dict, not {type(names).__name__}")
    for name in listed:
        if not plain_name(name):
            raise TypeError(f"sandbox: the enum member name {name!r} is not a plain identifier")
    return copy


class CheckedEnumType(enum.EnumMeta):
    """The metaclass of the enums candidate code defines: the functional API checks its names first."""

    def _create_(cls, class_name: Any, names: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return super()._create_(class_name, enum_names(names), **kwargs)  # type: ignore[misc]


def _checked_enum_bases() -> dict[str, type]:
    """The enum module's base classes as candidate code gets them: the same classes with ``CheckedEnumType``."""
    made: dict[str, type] = {}
    for name in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"):
        real = getattr(enum, name, None)
        if real is not None:
            namespace = CheckedEnumType.__prepare__(name, (real,))
            namespace.update({"__module__": "enum", "__qualname__": name})
            made[name] = CheckedEnumType(name, (real,), namespace)
    return made


_ENUM_BASES = _checked_enum_bases()
# ``enum.ReprEnum`` cannot be given another metaclass without a data type mixed in; models have no use for it.
ABSENT = object()  # what ``view_value`` answers for a name a view leaves out


def view_value(module: str, name: str, value: Any) -> Any:
    """What a module view holds for attribute ``name`` of ``module`` (``cwm.sandbox.imports``): a checked
    metaclass for a metaclass, a checked enum base for ``enum``'s, ``ABSENT`` for ``enum.ReprEnum``, a
    function of the modules that read classes' internals (``REFLECTING_MODULES``) wrapped so that what it
    returns goes through ``returned_value``, else the value itself."""
    if module == "enum" and name in _ENUM_BASES:
        return _ENUM_BASES[name]
    if module == "enum" and name == "ReprEnum":
        return ABSENT
    if isinstance(value, type) and issubclass(value, type):
        return checked_metaclass(value)
    if (module in REFLECTING_MODULES and isinstance(value, (types.FunctionType, types.BuiltinFunctionType))
            and not hasattr(value, "__mro_entries__")):  # ``typing.NamedTuple`` is a base as well as a function
        return _returning_checked(value, module)
    return value


# Modules whose functions read what a class or an alias is made of (``typing.get_origin(typing.Type[int])`` is
# the real ``type``): what they return is handed out as a view would hand it out. The other allowed modules
# compute over numbers, strings and containers and return new values or what they were given.
REFLECTING_MODULES = frozenset({"typing", "dataclasses", "enum"})
_REAL_ENUM_BASES = {getattr(enum, name): made for name, made in _ENUM_BASES.items()}


def _make_returned_value() -> Callable[[Any], Any]:
    """``returned_value``, with everything it consults bound in its closure."""
    real_type, is_subclass, checked, bases, tuple_, list_ = type, issubclass, checked_metaclass, _REAL_ENUM_BASES, tuple, list

    def returned_value(value: Any, depth: int = 0) -> Any:
        """``value`` as a view hands it out: a metaclass as ``checked_metaclass``, one of ``enum``'s bases as
        the checked one, the items of a tuple or list (nested up to 4 deep) the same way; else itself."""
        kind = real_type(value)
        if is_subclass(kind, real_type):
            if is_subclass(value, real_type):
                return checked(value)
            return bases.get(value, value)
        if (kind is tuple_ or kind is list_) and depth < 4:
            return kind([returned_value(item, depth + 1) for item in value])
        return value

    return returned_value


returned_value = _make_returned_value()


def _returning_checked(fn: Callable[..., Any], module: str) -> Callable[..., Any]:
    """``fn``, whose results go through ``returned_value``: a function of module ``module``'s globals, as
    ``fn`` is (what ``__globals__`` shows is the module's, not this one's)."""
    check = returned_value

    def checked_result(*args: Any, **kwargs: Any) -> Any:
        return check(fn(*args, **kwargs))

    name = getattr(fn, "__name__", "function")
    made = types.FunctionType(checked_result.__code__, vars(sys.modules[module]), name, None,
                              checked_result.__closure__)
    made.__qualname__, made.__doc__ = name, fn.__doc__
    return made


def _make_build_class() -> Callable[..., Any]:
    """``checked_build_class``, with everything it consults bound in its closure."""
    real_build, real_type, is_instance, is_subclass, refused = builtins.__build_class__, type, isinstance, issubclass, TypeError

    def checked_build_class(func: Any, name: Any, *bases: Any, **kwargs: Any) -> Any:
        """``__build_class__`` for candidate code: a class statement may not make a metaclass (a class
        deriving from ``type``, reached through a base whose ``__mro_entries__`` gives ``type``, such as
        ``typing.Type[int]``), which would build classes from any namespace."""
        made = real_build(func, name, *bases, **kwargs)
        if is_instance(made, real_type) and is_subclass(made, real_type):
            raise refused(f"sandbox: class {name} derives from type; a model may not define a metaclass")
        return made

    return checked_build_class


checked_build_class = _make_build_class()
