"""The device side of the ADB protocol, split by layer.

``message``   24-byte packet framing (CNXN, OPEN, OKAY, WRTE, CLSE, AUTH)
``transport`` one TCP connection from an adb server: handshake, stream table, flow control
``stream``    one logical stream (what a service reads from and writes to)
``shellv2``   the shell_v2 packet framing (stdout/stderr/exit inside a stream)
``sync``      the ``sync:`` file service (STAT, LIST, RECV, SEND, QUIT)
``vfs``       the small in-memory file system behind ``sync:`` and ``cat``/``rm``
``commands``  the shell command interpreter driving a :class:`~verirank_core.device.Device`

``phonesim/adb_server.py`` puts them together; nothing here knows the simulator.
"""
