# hostile: defining __dataclass_fields__ (dataclasses.asdict then reads attributes named by strings) and hooks
# job: call get_initial_state
# expect: static: line 9: defining '__dataclass_fields__' is not allowed

import dataclasses


class Probe:
    __dataclass_fields__ = {}

    def __getattr__(self, name):
        return name

    def __del__(self):
        while True:
            pass


def get_initial_state():
    return dataclasses.asdict(Probe())
