# hostile: the types module re-exported by dataclasses, to build a code object from raw bytecode
# job: call get_initial_state
# expect: static: line 10: access to attribute 'types' is not allowed
# ungated: error: module 'dataclasses' has no attribute 'types'

import dataclasses


def get_initial_state():
    code = dataclasses.types.CodeType(0, 0, 0, 0, 1, 0, b"\x97\x00d\x00S\x00", (None,), (), (), "x", "x", "x",
                                      1, b"", b"")
    return {"f": str(dataclasses.types.FunctionType(code, {})())}
