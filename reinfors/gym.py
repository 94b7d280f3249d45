"""``reinfors.gym`` — reinfors games behind the Gymnasium and PettingZoo APIs.

Most RL libraries (Stable-Baselines3, CleanRL, RLlib, Tianshou, …) consume the `Gymnasium
<https://gymnasium.farama.org>`_ single-agent API or the `PettingZoo
<https://pettingzoo.farama.org>`_ multi-agent APIs.  :func:`make` picks the one that fits a game::

    import reinfors as rf
    from reinfors import gym

    env = gym.make(rf.games.GridWorld(size=8), rf.Reward(goal=1.0))   # gymnasium.Env
    env = gym.make(rf.games.Snake(grid_size=10))                      # pettingzoo ParallelEnv
    env = gym.make(rf.games.Connect4())                               # pettingzoo AECEnv

* one agent → ``gymnasium.Env`` (:func:`gymnasium_env`);
* several agents moving together → PettingZoo ``ParallelEnv`` (:func:`parallel_env`), agents
  ``"player_0"``, ``"player_1"``, …; each agent's legal-action mask (int8) is
  ``infos[agent]["action_mask"]``;
* several agents taking turns → PettingZoo ``AECEnv`` (:func:`aec_env`); observations are
  ``{"observation": float32 array, "action_mask": int8 array}`` as in PettingZoo's classic games
  (the mask is all zeros for an agent not to move).

The choice is made from the game contract alone (agent count, who is active at reset), so games
added later work unchanged.  The reward is given to the adapter because these APIs return a
scalar reward from ``step``; ``reward=None`` means ``rf.Reward()`` (the game's default weights).
An ``rf.Env`` never truncates, so the adapters apply the time limit themselves:
``max_episode_steps`` (default: the game's ``truncation_horizon()``) ends an episode with
``truncated=True``, as Gymnasium's ``TimeLimit`` does.  ``seed`` seeds the first episode;
``reset(seed=s)`` rebuilds the game so the episode is reproducible from ``s``; ``render_mode``
is stored (no game renders).

``gymnasium`` and ``pettingzoo`` are optional (``pip install reinfors[gym]``) and imported only
when an adapter is built.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .env import Env
from .games import GameHandle
from .rewards import Reward
from .spaces import Box, Discrete

__all__ = ["aec_env", "gymnasium_env", "make", "parallel_env"]

# Gymnasium's CarRacing contract is uint8 HWC frames; handing CHW floats to gym pipelines would
# break them silently, so the adapters refuse it (as 0.4.0 does) until such a presentation exists.
_WITHHELD = frozenset({"car_racing"})

_CLASSES: dict[str, Any] = {}


def _missing(package: str) -> ImportError:
    return ImportError(f"reinfors.gym needs `{package}`; install the adapter backends with `pip install reinfors[gym]`")


def _gymnasium() -> Any:
    try:
        import gymnasium
    except ModuleNotFoundError as e:
        raise _missing("gymnasium") from e
    return gymnasium


def _pettingzoo() -> Any:
    try:
        import pettingzoo
    except ModuleNotFoundError as e:
        raise _missing("pettingzoo") from e
    return pettingzoo


def _box(space: Box) -> Any:
    return _gymnasium().spaces.Box(
        low=np.asarray(space.low, np.float32), high=np.asarray(space.high, np.float32), shape=space.shape, dtype=np.float32
    )


def _discrete(space: Discrete) -> Any:
    return _gymnasium().spaces.Discrete(space.n)


def _mask(legal: list[int], n: int) -> np.ndarray:
    """int8 ``[n]`` legal-action mask (the dtype ``Discrete.sample(mask=...)`` takes)."""
    m = np.zeros(n, np.int8)
    m[legal] = 1
    return m


def _limit(max_episode_steps: Any, game: Any) -> int | None:
    if max_episode_steps is None:
        return game.truncation_horizon()
    if not isinstance(max_episode_steps, int) or isinstance(max_episode_steps, bool):
        raise ValueError(f"max_episode_steps must be an int, got {max_episode_steps!r}")
    if max_episode_steps < 1:
        raise ValueError("max_episode_steps must be >= 1")
    return max_episode_steps


def _check_supported(game: Any) -> None:
    if not isinstance(game, GameHandle) and not hasattr(game, "name"):
        Env(game)  # a non-game gets the Env's own TypeError, not an AttributeError from here
    if game.name in _WITHHELD:
        raise ValueError(
            f"{game.name} is not available through the standard-API adapters yet; "
            "use rf.Env directly (see the catalogue entry for why)"
        )


class _Common:
    """State shared by the three adapters: the native Env, its reward and the time limit."""

    def _setup(self, game: Any, reward: Reward | None, max_episode_steps: Any, seed: int | None, render_mode: Any):
        _check_supported(game)
        self._game = game
        self._reward = reward if reward is not None else Reward()
        self._env = Env(game, self._reward, seed=seed or 0)
        self._max_episode_steps = _limit(max_episode_steps, game)
        self._elapsed = 0
        self.render_mode = render_mode

    def _restart(self, seed: int | None) -> None:
        if seed is not None:  # a fresh chance stream from `seed`: the episode replays exactly
            self._env = Env(self._game, self._reward, seed=seed)
        else:
            self._env.reset()
        self._elapsed = 0

    def _advance(self, joint: dict[int, int]) -> tuple[list[float], bool, bool]:
        """Step the native Env: ``(rewards by agent, terminated, truncated)``."""
        self._env.step(joint)
        self._elapsed += 1
        rewards = self._env.rewards
        terminated = self._env.done()
        truncated = not terminated and self._max_episode_steps is not None and self._elapsed >= self._max_episode_steps
        return rewards, terminated, truncated


def _gym_class() -> Any:
    if "gym" in _CLASSES:
        return _CLASSES["gym"]
    gymnasium = _gymnasium()

    class ReinforsGymEnv(_Common, gymnasium.Env):
        """A single-agent reinfors game as a ``gymnasium.Env``.

        Args:
            game: the game.
            reward: reward weights; ``None`` is the game's defaults.
            max_episode_steps: truncate after this many steps; ``None`` is the game's own
                horizon.
            seed: the first episode's seed (``None``: 0).
            render_mode: accepted for the API; nothing renders.

        Raises:
            ValueError: a multi-agent game, a bad ``max_episode_steps``, or a game the adapters
                withhold.
        """

        def __init__(
            self,
            game: GameHandle,
            reward: Reward | None = None,
            *,
            max_episode_steps: int | None = None,
            seed: int | None = None,
            render_mode: str | None = None,
        ):
            self._setup(game, reward, max_episode_steps, seed, render_mode)
            if self._env.num_agents() != 1:
                raise ValueError("gymnasium_env is single-agent only; use parallel_env for multi-agent")
            self.observation_space = _box(game.observation_space())
            self.action_space = _discrete(game.action_space())

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
            """Start an episode.

            Args:
                seed: a fresh chance stream from ``seed`` (the episode replays exactly); ``None``
                    continues the current stream.
                options: accepted for the API; unused.

            Returns:
                ``(observation, info)``.
            """
            super().reset(seed=seed)
            self._restart(seed)
            return self._env.observe(0), {}

        def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
            """Play one action.

            Args:
                action: a legal action id.

            Returns:
                ``(observation, reward, terminated, truncated, info)``.
            """
            rewards, terminated, truncated = self._advance({0: int(action)})
            return self._env.observe(0), float(rewards[0]), terminated, truncated, {}

    _CLASSES["gym"] = ReinforsGymEnv
    return ReinforsGymEnv


def _parallel_class() -> Any:
    if "parallel" in _CLASSES:
        return _CLASSES["parallel"]
    ParallelEnv = _pettingzoo().ParallelEnv

    class ReinforsParallelEnv(_Common, ParallelEnv):
        """A simultaneous multi-agent reinfors game as a PettingZoo ``ParallelEnv``.

        Agents are named ``"player_<i>"``; each step's infos carry the agent's ``action_mask``.

        Args:
            game: the game.
            reward: reward weights; ``None`` is the game's defaults.
            max_episode_steps: truncate after this many steps; ``None`` is the game's own
                horizon.
            seed: the first episode's seed (``None``: 0).
            render_mode: accepted for the API; nothing renders.

        Raises:
            ValueError: a bad ``max_episode_steps``, or a game the adapters withhold.
        """

        metadata = {"name": "reinfors", "render_modes": []}  # noqa: RUF012

        def __init__(
            self,
            game: GameHandle,
            reward: Reward | None = None,
            *,
            max_episode_steps: int | None = None,
            seed: int | None = None,
            render_mode: str | None = None,
        ):
            self._setup(game, reward, max_episode_steps, seed, render_mode)
            self.possible_agents = [f"player_{i}" for i in range(self._env.num_agents())]
            self.agents = []
            self._index = {name: i for i, name in enumerate(self.possible_agents)}
            self._obs_space = _box(game.observation_space())
            self._act_space = _discrete(game.action_space())

        def observation_space(self, agent: str) -> Any:
            """The agent's observation space.

            Args:
                agent: an agent name (``"player_<i>"``).

            Returns:
                The ``gymnasium`` space.
            """
            return self._obs_space

        def action_space(self, agent: str) -> Any:
            """The agent's action space.

            Args:
                agent: an agent name (``"player_<i>"``).

            Returns:
                ``gymnasium.spaces.Discrete``.
            """
            return self._act_space

        def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
            """Start an episode.

            Args:
                seed: a fresh chance stream from ``seed``; ``None`` continues the current one.
                options: accepted for the API; unused.

            Returns:
                ``(observations, infos)`` by agent name.
            """
            self._restart(seed)
            self.agents = list(self.possible_agents)
            n = self._act_space.n
            obs = {a: self._env.observe(self._index[a]) for a in self.agents}
            infos = {a: {"action_mask": _mask(self._env.legal_actions(self._index[a]), n)} for a in self.agents}
            return obs, infos

        def step(self, actions: dict[str, int]) -> tuple[dict, dict, dict, dict, dict]:
            """Play one simultaneous tick.

            Args:
                actions: ``{agent name: action id}`` for every live agent.

            Returns:
                ``(observations, rewards, terminations, truncations, infos)`` by agent name.
            """
            rewards_vec, over, _ = self._advance({self._index[a]: int(x) for a, x in actions.items()})
            hit_limit = self._max_episode_steps is not None and self._elapsed >= self._max_episode_steps
            still = set(self._env.active_agents())
            n = self._act_space.n
            obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
            for a in self.agents:
                i = self._index[a]
                term = over or i not in still  # the episode ended, or this agent is out (died)
                trunc = hit_limit and not term
                obs[a] = self._env.observe(i)
                rewards[a] = float(rewards_vec[i])
                terms[a], truncs[a] = term, trunc
                infos[a] = {"action_mask": _mask([] if term or trunc else self._env.legal_actions(i), n)}
            self.agents = [a for a in self.agents if not (terms[a] or truncs[a])]
            return obs, rewards, terms, truncs, infos

    _CLASSES["parallel"] = ReinforsParallelEnv
    return ReinforsParallelEnv


def _aec_class() -> Any:
    if "aec" in _CLASSES:
        return _CLASSES["aec"]
    gymnasium = _gymnasium()
    AECEnv = _pettingzoo().AECEnv

    class ReinforsAecEnv(_Common, AECEnv):
        """A turn-based multi-agent reinfors game as a PettingZoo ``AECEnv``.

        Observations are ``{"observation": float32 array, "action_mask": int8 array}``; the mask
        lists the mover's legal actions and is all zeros for everyone else, so generic code
        samples legally without knowing the game.

        Args:
            game: the game.
            reward: reward weights; ``None`` is the game's defaults.
            max_episode_steps: truncate after this many steps; ``None`` is the game's own
                horizon.
            seed: the first episode's seed (``None``: 0).
            render_mode: accepted for the API; nothing renders.

        Raises:
            ValueError: a bad ``max_episode_steps``, or a game the adapters withhold.
        """

        metadata = {"name": "reinfors", "render_modes": [], "is_parallelizable": False}  # noqa: RUF012

        def __init__(
            self,
            game: GameHandle,
            reward: Reward | None = None,
            *,
            max_episode_steps: int | None = None,
            seed: int | None = None,
            render_mode: str | None = None,
        ):
            super().__init__()
            self._setup(game, reward, max_episode_steps, seed, render_mode)
            self.possible_agents = [f"player_{i}" for i in range(self._env.num_agents())]
            self.agents = []
            self._index = {name: i for i, name in enumerate(self.possible_agents)}
            self._act_space = _discrete(game.action_space())
            n = self._act_space.n
            self._obs_space = gymnasium.spaces.Dict(
                {
                    "observation": _box(game.observation_space()),
                    "action_mask": gymnasium.spaces.Box(low=0, high=1, shape=(n,), dtype=np.int8),
                }
            )

        def observation_space(self, agent: str) -> Any:
            """The agent's observation space.

            Args:
                agent: an agent name (``"player_<i>"``).

            Returns:
                The ``gymnasium`` space.
            """
            return self._obs_space

        def action_space(self, agent: str) -> Any:
            """The agent's action space.

            Args:
                agent: an agent name (``"player_<i>"``).

            Returns:
                ``gymnasium.spaces.Discrete``.
            """
            return self._act_space

        def observe(self, agent: str) -> dict[str, np.ndarray]:
            """The agent's observation and action mask.

            Args:
                agent: an agent name.

            Returns:
                ``{"observation": float32 array, "action_mask": int8 array}``.
            """
            i = self._index[agent]
            moving = (
                agent in self.agents
                and agent == self.agent_selection
                and not (self.terminations[agent] or self.truncations[agent])
            )
            legal = self._env.legal_actions(i) if moving else []
            return {"observation": self._env.observe(i), "action_mask": _mask(legal, self._act_space.n)}

        def reset(self, seed: int | None = None, options: dict | None = None) -> None:
            """Start an episode.

            Args:
                seed: a fresh chance stream from ``seed``; ``None`` continues the current one.
                options: accepted for the API; unused.
            """
            self._restart(seed)
            self.agents = list(self.possible_agents)
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos = {a: {} for a in self.agents}
            self.agent_selection = self.possible_agents[self._env.active_agents()[0]]

        def step(self, action: int | None) -> None:
            """Play the selected agent's action (``None`` for a finished agent's dead step).

            Args:
                action: a legal action id of ``agent_selection``.
            """
            agent = self.agent_selection
            if self.terminations[agent] or self.truncations[agent]:
                self._was_dead_step(action)
                return
            self._cumulative_rewards[agent] = 0.0  # last() just reported it; start accumulating anew
            rewards_vec, terminated, truncated = self._advance({self._index[agent]: int(action)})
            self.rewards = {a: float(rewards_vec[self._index[a]]) for a in self.agents}
            if terminated or truncated:
                self.terminations = dict.fromkeys(self.agents, terminated)
                self.truncations = dict.fromkeys(self.agents, truncated)
                # every agent gets a last() look at its outcome before its dead step; the next
                # agent after the mover goes first
                self.agent_selection = self.agents[(self.agents.index(agent) + 1) % len(self.agents)]
            else:
                self.agent_selection = self.possible_agents[self._env.active_agents()[0]]
            self._accumulate_rewards()

        def render(self) -> None:
            """Nothing renders (``render_modes`` is empty)."""
            return None

        def close(self) -> None:
            """Nothing to release."""
            return None

    _CLASSES["aec"] = ReinforsAecEnv
    return ReinforsAecEnv


def gymnasium_env(game: Any, reward: Reward | None = None, **kwargs: Any) -> Any:
    """A single-agent reinfors game as a ``gymnasium.Env`` (ValueError for multi-agent games).

    Keyword arguments: ``max_episode_steps``, ``seed``, ``render_mode`` (see the module docs).

    Args:
        game: the game (``rf.games.Connect4()``, ...).
        reward: reward weights; ``None`` is the game's defaults.
        **kwargs: ``max_episode_steps`` (truncation; default the game's own horizon), ``seed``
            (the first reset's seed) and ``render_mode``.

    Returns:
        The ``gymnasium.Env``.

    Raises:
        ImportError: gymnasium is not installed (``pip install 'reinfors[gym]'``).
        ValueError: a multi-agent game.
    """
    return _gym_class()(game, reward, **kwargs)


def parallel_env(game: Any, reward: Reward | None = None, **kwargs: Any) -> Any:
    """A simultaneous multi-agent reinfors game as a PettingZoo ``ParallelEnv``.

    Args:
        game: the game (``rf.games.Connect4()``, ...).
        reward: reward weights; ``None`` is the game's defaults.
        **kwargs: ``max_episode_steps`` (truncation; default the game's own horizon), ``seed``
            (the first reset's seed) and ``render_mode``.

    Returns:
        The ``pettingzoo.ParallelEnv``.

    Raises:
        ImportError: pettingzoo is not installed (``pip install 'reinfors[gym]'``).
        ValueError: a game whose agents do not all move at once.
    """
    return _parallel_class()(game, reward, **kwargs)


def aec_env(game: Any, reward: Reward | None = None, **kwargs: Any) -> Any:
    """A turn-based multi-agent reinfors game as a PettingZoo ``AECEnv``.

    Args:
        game: the game (``rf.games.Connect4()``, ...).
        reward: reward weights; ``None`` is the game's defaults.
        **kwargs: ``max_episode_steps`` (truncation; default the game's own horizon), ``seed``
            (the first reset's seed) and ``render_mode``.

    Returns:
        The ``pettingzoo.AECEnv``.

    Raises:
        ImportError: pettingzoo is not installed (``pip install 'reinfors[gym]'``).
        ValueError: a game that is not turn-based.
    """
    return _aec_class()(game, reward, **kwargs)


def make(game: Any, reward: Reward | None = None, **kwargs: Any) -> Any:
    """The standard-API adapter that fits ``game``: ``gymnasium.Env`` for one agent, PettingZoo
    ``ParallelEnv`` when every agent moves at once, PettingZoo ``AECEnv`` for turn-taking.

    Args:
        game: the game (``rf.games.Connect4()``, ...).
        reward: reward weights; ``None`` is the game's defaults.
        **kwargs: ``max_episode_steps`` (truncation; default the game's own horizon), ``seed``
            (the first reset's seed) and ``render_mode``.

    Returns:
        The adapter.

    Raises:
        ImportError: the adapter's package is not installed (``pip install 'reinfors[gym]'``).
    """
    probe = Env(game)
    n = probe.num_agents()
    if n == 1:
        return gymnasium_env(game, reward, **kwargs)
    if len(probe.active_agents()) == n:
        return parallel_env(game, reward, **kwargs)
    return aec_env(game, reward, **kwargs)
