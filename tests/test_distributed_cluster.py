"""reinfors.distributed.Collectors on a multi-node Ray cluster on one machine
(``ray.cluster_utils.Cluster``: a head and two worker nodes, each worker with its own custom
resource): actors pinned to named nodes through ``actor_resources``; a node removed under a
running actor, which restarts on another node from its last snapshot, and the learner receives
the batches of a fault-free run; Ctrl-C in a learner leaves no actor behind.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import ray
from ray.cluster_utils import Cluster

from reinfors.distributed import CollectorRestartWarning, Collectors
from tests.distributed.helpers import COLLECT, LINEAR, check_against_replay, config, run

STORE = 80 * 2**20  # object store per node (Ray's floor is 75 MiB)


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": STORE},
    )
    nodes = {
        name: c.add_node(num_cpus=1, resources={name: 1}, object_store_memory=STORE) for name in ("node_a", "node_b")
    }
    ray.init(address=c.address, log_to_driver=False, configure_logging=False)
    c.wait_for_nodes()
    yield c, nodes
    ray.shutdown()
    c.shutdown()


def _alive_actors() -> int:
    return sum(1 for a in ray._private.state.actors().values() if a["State"] != "DEAD")


def test_pinned_actors_survive_their_node_going_away(cluster):
    c, nodes = cluster
    cfg = config()
    pins = [{"node_a": 1}, {"node_b": 1}]
    with Collectors(cfg, LINEAR, n_actors=2, collect_size=COLLECT, ordered=True, actor_resources=pins) as col:
        where = ray.get([a.ready.remote() for a in col._actors])
        assert where == [nodes["node_a"].node_id, nodes["node_b"].node_id]  # each on its named node
        got = run(col, 4)
        c.remove_node(nodes["node_a"])
        with pytest.warns(CollectorRestartWarning, match=r"collector actor 0 died .*gone with its node"):
            got += run(col, 6)
        assert col.restarts == [1, 0]
        moved = ray.get(col._actors[0].ready.remote())
        assert moved != nodes["node_a"].node_id and moved in {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    check_against_replay(cfg, got)  # the learner got a fault-free run's batches
    assert [a for a, _, _ in got] == [k % 2 for k in range(10)]
    assert _alive_actors() == 0


def test_ctrl_c_in_the_learner_leaves_no_actor(cluster, tmp_path):
    c, _ = cluster
    root = Path(__file__).resolve().parents[1]
    script = tmp_path / "learner.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, signal, sys
            sys.path.insert(0, {str(root)!r})
            import ray
            from reinfors.distributed import Collectors
            from tests.distributed.helpers import LINEAR, config, weights
            ray.init(address={c.address!r}, log_to_driver=False)
            col = Collectors(config(), LINEAR, n_actors=1, collect_size=24, actor_resources=[{{"node_b": 1}}])
            col.set_weights(weights(0))
            for k, _ in enumerate(col):
                if k == 2:
                    print("collecting", flush=True)
                    os.kill(os.getpid(), signal.SIGINT)
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert "collecting" in out.stdout and "KeyboardInterrupt" in out.stderr, out.stderr[-2000:]
    for _ in range(300):  # the kill reaches the GCS asynchronously
        if _alive_actors() == 0:
            break
        time.sleep(0.1)
    assert _alive_actors() == 0
