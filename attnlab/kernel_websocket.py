"""Jupyter Server's kernel websocket with Nagle's algorithm switched off.

Jupyter Server leaves Nagle's algorithm on for the websocket that carries kernel
messages to the browser. A slider step makes the kernel send a burst of small
messages (busy, the new pixels, the readouts, idle); with Nagle on, every message
after the first waits for the browser to acknowledge the one before, and Linux
delays that acknowledgement by up to 40 ms. Measured on this kind of machine, a
kernel message took 18-20 ms to reach the page through the server against
0.5-2 ms straight from the kernel, and that wait was the largest part of an
explorer's slider-to-pixels time (``benchmarks/latency.py`` prints the breakdown).

This module is a Jupyter Server extension that makes the server use
:class:`NoDelayKernelWebsocketConnection`, which differs from Jupyter Server's own
class only in that socket option. ``jupyter-config/jupyter_server_config.d/attnlab.json``
enables it: ``pip install .`` (Binder) copies that file into the environment's
``etc/jupyter``, and ``./run.sh lab`` and the browser tests point
``JUPYTER_CONFIG_PATH`` at ``jupyter-config/`` (an editable install copies no data files).
Without it the course works the same, with slower sliders.
"""

from __future__ import annotations

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection


def _jupyter_server_extension_points() -> list[dict]:
    """Jupyter Server's entry point: this module is the extension."""
    return [{"module": "attnlab.kernel_websocket"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Make new kernel websockets use :class:`NoDelayKernelWebsocketConnection`.

    Only Jupyter Server's default connection class is replaced (not, e.g., a gateway's).
    """
    settings = serverapp.web_app.settings
    if settings.get("kernel_websocket_connection_class") is ZMQChannelsWebsocketConnection:
        settings["kernel_websocket_connection_class"] = NoDelayKernelWebsocketConnection
        serverapp.log.info("attnlab: kernel websockets send without Nagle's delay")


class NoDelayKernelWebsocketConnection(ZMQChannelsWebsocketConnection):
    """``ZMQChannelsWebsocketConnection`` that sets TCP_NODELAY before relaying messages."""

    def connect(self):
        """Switch Nagle's algorithm off on this websocket, then connect as usual."""
        self.websocket_handler.set_nodelay(True)
        return super().connect()
