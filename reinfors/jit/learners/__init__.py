"""Learner parts: record-building kernels (DQN n-step windows, PPO GAE, ...)."""
