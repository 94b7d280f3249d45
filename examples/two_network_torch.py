"""The two-network pattern: train a PyTorch network while a stream collects with a stable copy.

    python examples/two_network_torch.py [--updates 3] [--records 128] [--sims 16]

AlphaZero self-play on Connect4.  ``learner_net`` is optimised on this thread; the stream's
thread runs inference with ``collector_net``, a copy that changes only between batches, under
``weights_lock`` (``load_state_dict`` may release the GIL, so an unguarded sync could race a
forward pass).  ``engine.weights_updated()`` sits beside every sync so an ``infer_cache`` stays
coherent if you enable one later.  Needs the ``train`` extra (PyTorch); without it the script
says so and exits cleanly.
"""

from __future__ import annotations

import argparse
import copy
import threading
from dataclasses import dataclass

import numpy as np

import reinfors as rf


@dataclass
class Args:
    updates: int = 3  # optimiser updates (one streamed batch each)
    records: int = 128  # collect_size of the stream
    sims: int = 16  # AlphaZero simulations per move
    n_games: int = 16  # parallel episode slots
    depth: int = 1  # finished batches allowed to wait (policy lag bound)
    lr: float = 1e-3
    seed: int = 0


def parse() -> Args:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in vars(Args()).items():
        ap.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return Args(**vars(ap.parse_args()))


def main() -> int:
    args = parse()
    try:
        import torch
        from torch import nn
    except ImportError:
        print("two_network_torch.py needs PyTorch (pip install 'reinfors[train]'); nothing to run.")
        return 0
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # a tiny network: leave the cores to the engine's workers

    game = rf.games.Connect4()
    obs_size, n_actions = int(np.prod(game.observation_space().shape)), game.action_space().n
    engine = rf.Engine(
        game,
        rf.Reward(win=1.0, loss=-1.0),
        rf.policies.AlphaZero(num_simulations=args.sims),
        rf.learners.AlphaZero(gamma=1.0),
        n_games=args.n_games,
        seed=args.seed,
    )
    # obs (84) -> 128 relu -> 7 policy logits + 1 value
    learner_net = nn.Sequential(nn.Linear(obs_size, 128), nn.ReLU(), nn.Linear(128, n_actions + 1))
    collector_net = copy.deepcopy(learner_net).eval().requires_grad_(False)
    weights_lock = threading.Lock()
    opt = torch.optim.Adam(learner_net.parameters(), lr=args.lr)

    def infer(obs: np.ndarray):
        """float32 (rows, 84) -> (logits (rows, 7), values (rows,)), on the stream's thread."""
        with weights_lock, torch.no_grad():
            out = collector_net(torch.tensor(obs))  # copies: the engine's rows are only lent
        return out[:, :n_actions].numpy(), torch.tanh(out[:, n_actions]).numpy()

    def train(batch: rf.AlphaZeroBatch) -> float:
        x = torch.from_numpy(batch.obs)
        pi = torch.from_numpy(batch.policy_targets).float()  # (M, 7) visit distributions
        w = torch.from_numpy(batch.policy_weights).float()  # (M,)
        z = torch.from_numpy(batch.value_targets).float()  # (M,)
        out = learner_net(x)
        policy_loss = -(w * (pi * torch.log_softmax(out[:, :n_actions], dim=1)).sum(dim=1)).mean()
        value_loss = ((torch.tanh(out[:, n_actions]) - z) ** 2).mean()
        loss = policy_loss + value_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        return float(loss)

    generation = 0  # weights_updated calls so far (the engine's weights generation)
    with engine.collect_stream(collect_size=args.records, infer=infer, depth=args.depth) as stream:
        for update in range(args.updates):
            batch = next(stream)
            lag = generation - batch.weights_generations  # policy lag of each record, in updates
            loss = train(batch)  # the stream searches with collector_net meanwhile
            with weights_lock:
                collector_net.load_state_dict(learner_net.state_dict())
                engine.weights_updated()
                generation += 1
            # the baseline on the same batch: a uniform policy and a zero value (what an untrained
            # network's near-zero outputs score; the loss must fall below it)
            uniform = float(batch.policy_weights.mean() * np.log(n_actions) + (batch.value_targets**2).mean())
            print(
                f"update={update} records={len(batch.obs)} queued={stream.pending()} loss={loss:.4f} "
                f"(uniform policy + zero value: {uniform:.4f}) lag mean={lag.mean():.2f} max={lag.max()}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
