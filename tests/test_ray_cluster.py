"""The Ray engine on a real two-node Ray cluster on this machine: a worker node is killed mid-run and the numbers
are still those of the local engine. Skips when Ray is not installed."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

from styleval.engine import StreamOptions, score_stream  # noqa: E402
from styleval.engine.options import StatisticsOptions

from test_stream import write_table  # noqa: E402

RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
pytestmark = pytest.mark.skipif(RAY is None, reason="the ray command is not installed")

LEXICAL = ["bleu", "ter"]
NEURAL = "sentence_cosine"  # MiniLM sentence embeddings, an offline model


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _node_ports() -> list[str]:
    p = _free_ports(6)
    low = p[5] % 20000 + 30000
    return [f"--node-manager-port={p[0]}", f"--object-manager-port={p[1]}", f"--metrics-export-port={p[2]}",
            f"--dashboard-agent-listen-port={p[3]}", f"--runtime-env-agent-port={p[4]}",
            f"--min-worker-port={low}", f"--max-worker-port={low + 200}"]


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """A Ray node in its own process group (``--block`` keeps its processes under this one); its output goes to
    ``log`` so that a node that fails to start can say why."""
    with log.open("ab") as sink:
        return subprocess.Popen([RAY, "start", "--block", "--disable-usage-stats", *args], env=env,
                                start_new_session=True, stdout=sink, stderr=subprocess.STDOUT)


class NodeExited(AssertionError):
    """A `ray start` process ended while the cluster was coming up."""


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def _kill_leftovers(marker: str) -> None:
    """Processes of this test's cluster that left its process groups (found by its temp folder), by pid."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and int(pid) != os.getpid():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def _wait_for_nodes(address: str, n: int, env: dict[str, str], nodes: dict[Path, subprocess.Popen],
                    timeout: float = 180) -> None:
    """Wait until ``n`` nodes are alive; ``nodes`` maps each node's log to its `ray start` process."""
    probe = ("import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
             "print(sum(1 for x in ray.nodes() if x['Alive']))")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for log, node in nodes.items():
            if node.poll() is not None:
                raise NodeExited(f"a `ray start` node exited with {node.returncode}; the end of {log}:\n{_tail(log)}")
        try:
            out = subprocess.run([sys.executable, "-c", probe, address], env=env, capture_output=True, text=True,
                                 timeout=60)
        except subprocess.TimeoutExpired:
            continue
        if out.returncode == 0 and out.stdout.strip().splitlines()[-1:] == [str(n)]:
            return
        time.sleep(2)
    raise AssertionError(f"the Ray cluster at {address} did not reach {n} nodes")


def _bring_up(args: list[str], env: dict[str, str], address: str, n: int, alive: dict[Path, subprocess.Popen],
              log: Path, tries: int = 3) -> subprocess.Popen:
    """Start a node and wait for the cluster to count ``n`` nodes. A node that exits while starting (a port taken
    between choosing and binding it, a registration that timed out on a loaded machine) is started again with
    fresh ports; start-up is not what this test checks, the engine's recovery is."""
    for attempt in range(1, tries + 1):
        node = _start([*args, *_node_ports()], env, log)
        try:
            _wait_for_nodes(address, n, env, {**alive, log: node})
            return node
        except BaseException as exc:  # leave no node behind, whatever stopped the wait
            _kill(node)
            if not isinstance(exc, NodeExited) or attempt == tries:
                raise
    raise AssertionError("unreachable")


def _neural_available() -> bool:
    try:
        from styleval.metrics import registry

        registry.create(NEURAL, against="source").resources()
        return True
    except Exception:  # model or torch not installed here
        return False


def test_two_node_cluster_survives_a_lost_worker_node(tmp_path):
    metrics = LEXICAL + ([NEURAL] if _neural_available() else [])
    table = write_table(tmp_path / "t.jsonl", 700, systems=3, seed=2)  # 2,100 records
    chunk = 150

    local = score_stream(table, metrics, against=["source"], options=StatisticsOptions(bootstrap=100),
                         stream=StreamOptions(chunk_size=chunk, segments=tmp_path / "local.jsonl"))

    temp = Path("/tmp") / f"styleval-ray-test-{os.getpid()}"
    (head_port,) = _free_ports(1)
    env = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0", "RAY_AUTH_MODE": "disabled", "OMP_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    address = f"127.0.0.1:{head_port}"
    head_log, worker_log = tmp_path / "head.log", tmp_path / "worker.log"
    head = worker = None
    try:
        head = _bring_up(["--head", f"--port={head_port}", "--num-cpus=2", "--object-store-memory=150000000",
                          "--include-dashboard=false", f"--temp-dir={temp}"], env, address, 1, {}, head_log)
        worker = _bring_up([f"--address={address}", "--num-cpus=2", "--object-store-memory=150000000"],
                           env, address, 2, {head_log: head}, worker_log)

        seg, out = tmp_path / "ray.jsonl", tmp_path / "ray.json"
        driver = subprocess.Popen(
            [sys.executable, "-m", "styleval.cli.main", "score", "--input", str(table), "-m", ",".join(metrics),
             "--against", "source", "--engine", "ray", "--ray-address", address, "--ray-workers", "2",
             "--chunk-size", str(chunk), "--bootstrap", "100", "--segments", str(seg), "--json", str(out),
             "--no-progress", "--quiet"], env=env)
        partial = Path(str(seg) + ".partial")
        deadline = time.monotonic() + 900
        while not (partial.exists() and partial.stat().st_size > 0):  # the driver has reduced a first block
            assert driver.poll() is None, "the Ray run ended before the worker node could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.1)  # a loaded machine may reduce the blocks in a burst: look often
        _kill(worker)  # the second node dies mid-run: its actors, tasks and objects are lost
        worker = None
        assert driver.wait(timeout=1200) == 0

        got = json.loads(out.read_text())
        want = local.to_dict()
        for a, b in zip(got["corpus"], want["corpus"]):
            assert (a["metric"], a["system"], a["score"], a["ci"], a["signature_string"]) == \
                   (b["metric"], b["system"], b["score"], b["ci"], b["signature_string"])
        assert len(got["corpus"]) == len(want["corpus"])
        assert seg.read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    finally:
        if worker is not None:
            _kill(worker)
        if head is not None:
            _kill(head)
        _kill_leftovers(str(temp))
        shutil.rmtree(temp, ignore_errors=True)
