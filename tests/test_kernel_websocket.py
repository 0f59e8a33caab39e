"""The Jupyter Server extension that switches Nagle's algorithm off on kernel websockets."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

from attnlab import kernel_websocket

ROOT = Path(__file__).resolve().parents[1]


def fake_server(connection_class):
    settings = {"kernel_websocket_connection_class": connection_class}
    return SimpleNamespace(
        web_app=SimpleNamespace(settings=settings), log=logging.getLogger("test")
    )


def test_extension_replaces_the_default_connection_class():
    server = fake_server(ZMQChannelsWebsocketConnection)
    kernel_websocket._load_jupyter_server_extension(server)
    chosen = server.web_app.settings["kernel_websocket_connection_class"]
    assert chosen is kernel_websocket.NoDelayKernelWebsocketConnection
    assert issubclass(chosen, ZMQChannelsWebsocketConnection)


def test_extension_leaves_other_connection_classes_alone():
    class Gateway:
        pass

    server = fake_server(Gateway)
    kernel_websocket._load_jupyter_server_extension(server)
    assert server.web_app.settings["kernel_websocket_connection_class"] is Gateway


def test_connect_sets_nodelay_before_connecting(monkeypatch):
    calls = []
    monkeypatch.setattr(ZMQChannelsWebsocketConnection, "connect", lambda self: calls.append("up"))
    connection = object.__new__(kernel_websocket.NoDelayKernelWebsocketConnection)
    handler = SimpleNamespace(set_nodelay=lambda value: calls.append(("nodelay", value)))
    monkeypatch.setattr(
        kernel_websocket.NoDelayKernelWebsocketConnection,
        "websocket_handler",
        handler,
        raising=False,
    )
    connection.connect()
    assert calls == [("nodelay", True), "up"]


def test_config_enables_the_extension_and_is_installed_with_the_package():
    config = ROOT / "jupyter-config" / "jupyter_server_config.d" / "attnlab.json"
    enabled = json.loads(config.read_text())["ServerApp"]["jpserver_extensions"]
    assert enabled["attnlab.kernel_websocket"] is True
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"etc/jupyter/jupyter_server_config.d" = ["jupyter-config/' in pyproject
    assert 'JUPYTER_CONFIG_PATH="$PWD/jupyter-config' in (ROOT / "run.sh").read_text()
    assert kernel_websocket._jupyter_server_extension_points() == [
        {"module": "attnlab.kernel_websocket"}
    ]
