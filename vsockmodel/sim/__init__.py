"""The simulation: the RX path's actors on one simpy clock.

``run.py`` wires them together (``simulate``); one module per actor:
``host.py`` (the vsock_perf sender and the vhost worker), ``guest.py`` (the
RX worker), ``sock.py`` (the guest socket and its lock), ``reader.py`` (the
application's recv() loop), on the clock and random streams of ``engine.py``.
The simulation imports only the model's rules (``vsockmodel.model``).
"""
