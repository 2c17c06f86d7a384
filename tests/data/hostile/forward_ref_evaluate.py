# hostile: a method called with a typing.ForwardRef as self evaluates the ref's string with the real builtins
# job: call get_initial_state
# expect: static: line 11: access to attribute '_evaluate'
# ungated: error: opening '/etc/passwd' is not allowed

import typing


class Peek:
    def run(self, names):
        return self._evaluate(names, None, frozenset())


def get_initial_state():
    ref = typing.get_args(typing.List["str(open('/etc/passwd').read())"])[0]
    return {"passwd": str(Peek.run(ref, {}))}
