"""A real two-node Ray cluster on loopback, started and stopped by the tests themselves."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

RAY = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201 - yields "HOST:PORT"
    """A head node and one worker node (one CPU each) on 127.0.0.1; yields the cluster address."""
    pytest.importorskip("ray")
    if not RAY.is_file():
        pytest.skip("the ray command is not installed next to this Python")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    temp = Path("/tmp") / f"ray-nclue-{os.getpid()}"  # Ray's socket paths must stay short
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = ["--num-cpus=1", "--node-ip-address=127.0.0.1", "--object-store-memory=300000000", "--disable-usage-stats"]
    head = [str(RAY), "start", "--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp}", *common]
    worker = [str(RAY), "start", f"--address={address}", *common]
    try:
        subprocess.run(head, env=env, check=True, capture_output=True, timeout=120)
        subprocess.run(worker, env=env, check=True, capture_output=True, timeout=120)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True)
        pytest.skip(f"could not start a local Ray cluster: {exc}")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    try:
        yield address
    finally:
        import ray

        if ray.is_initialized():
            ray.shutdown()
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)
