import numpy as np, reinfors as rf, sys
sys.path.insert(0, '/work/notes/probes2')
class AZRec:
    """logits = obs @ W, value = tanh(obs @ v) (f64 math), records calls"""
    def __init__(self, obs_size, A, seed=321, scale=0.3, extra=0):
        r = np.random.default_rng(seed)
        self.W = r.standard_normal((obs_size, A + extra)) * scale
        self.v = r.standard_normal(obs_size) * scale
        self.calls = []
    def out(self, obs):
        o = obs.astype(np.float64)
        if len(o) == 0: return np.zeros((0, self.W.shape[1])), np.zeros(0)
        return np.stack([x @ self.W for x in o]), np.array([np.tanh(x @ self.v) for x in o])
    def __call__(self, obs):
        self.calls.append(obs.copy())
        return self.out(obs)
class QRec:
    def __init__(self, obs_size, A, n_heads=1, seed=123, scale=0.3):
        r = np.random.default_rng(seed)
        self.W = r.standard_normal((obs_size, n_heads * A)) * scale
        self.A, self.H = A, n_heads
        self.calls = []
    def out(self, obs):
        o = obs.astype(np.float64)
        if len(o) == 0: return np.zeros((0, self.H, self.A))
        return np.stack([np.tanh(x @ self.W) for x in o]).reshape(len(o), self.H, self.A)
    def __call__(self, obs):
        self.calls.append(obs.copy())
        return self.out(obs)
def osz(g): return int(np.prod(g.observation_space().shape))
def tel(b): return {k: v for k, v in b.telemetry.items() if k != 'episodes'}
