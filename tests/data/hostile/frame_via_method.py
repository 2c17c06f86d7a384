# hostile: methods called with a module as self ('Peek.frame(Peek.grab(collections))') reach sys._getframe
# hostile: where the gate cannot see it; the module views leave nothing to reach
# job: call get_initial_state
# expect: error: module 'collections' has no attribute '_sys'
# ungated: error: module 'collections' has no attribute '_sys'

import collections


class Peek:
    def grab(self):
        return self._sys

    def frame(self):
        return self._getframe(1)


def get_initial_state():
    return {"frame": str(Peek.frame(Peek.grab(collections)))}
