"""Host/device helpers: device_put, device_get, devices, block_until_ready."""

from __future__ import annotations

import numpy as onp

import mjcore


def test_device_round_trip_of_a_pytree():
    tree = {"a": onp.arange(3.0), "b": (onp.ones(2, onp.float32), 5)}
    on_device = mjcore.tree_util.tree_map(mjcore.device_put, tree)
    assert isinstance(on_device["a"], mjcore.Array)
    assert mjcore.block_until_ready(on_device) is on_device
    back = mjcore.device_get(on_device)
    assert isinstance(back["a"], onp.ndarray) and back["b"][0].dtype == onp.float32
    onp.testing.assert_array_equal(back["a"], tree["a"])
    assert int(back["b"][1]) == 5


def test_devices_lists_the_default_platforms_device():
    (device,) = mjcore.devices()
    platform = mjcore.default_backend()
    assert device.platform == platform
    assert ("cuda" if platform == "gpu" else "cpu") in str(device).lower()
