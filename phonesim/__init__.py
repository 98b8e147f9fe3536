"""The simulated phone: worlds (app descriptions), the simulator, and ``SimDevice``.

Modules, in reading order:

* ``expr``       the tiny expression language (``visible_if``, goals) and text templates
* ``world``      the world file format (pydantic models), loading and validation
* ``layout``     world screen + state -> placed UI nodes (rows, lists, dialogs, launcher)
* ``uixml``      placed nodes -> ``uiautomator dump`` XML
* ``render``     placed nodes -> PNG screenshot
* ``simulator``  state, back stacks, input handling (tap, swipe, keys, text, apps)
* ``device``     ``SimDevice``: the simulator behind the :class:`verirank_core.device.Device` interface
* ``explore``    BFS over real inputs: reachability of screens and goals (world checking, labels)

Goals are ground truth for labelling only; agents and judges never read them.
"""

from phonesim.simulator import Simulator
from phonesim.world import World, list_worlds, load_world

__all__ = ["Simulator", "World", "list_worlds", "load_world"]
