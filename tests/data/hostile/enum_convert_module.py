# hostile: a method called with enum.Enum as its self runs Enum._convert_, which turns any module's globals
# hostile: (looked up by name in sys.modules) into members, os.open among them
# job: call get_initial_state
# expect: static: line 12: access to attribute '_convert_'
# ungated: error: opening '/tmp/cwm-hostile-enum-convert' is not allowed

import enum


class Peek:
    def convert(self):
        return self._convert_("Leak", "os", lambda name: name == "open")


def get_initial_state():
    Peek.convert(enum.Enum).open.value("/tmp/cwm-hostile-enum-convert", 0o101)
    return {}
