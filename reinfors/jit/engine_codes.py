"""Named indices and codes shared by the engine kernels and the Python scheduler.

Everything the collection runtime shares between threads is a NumPy array; these constants name
its cells, so kernels and orchestration agree on one layout.

``cfg: [CFG_SIZE] int64`` — immutable per engine (written before workers start)::

``ctl: [CTL_SIZE] int64`` — live control words, touched with atomics only (each on its own
cache line: index ``8 * k``)::

Slot status codes (``status: [G] int64``)::

    EMIT      the slot observes its next decision (encode + legal) and requests rows
    WAIT      its rows are in flight; the scheduler will route predictions back
    RESUME    predictions arrived: choose, step, record, go on
    PARK      reached the window target level (observation done, nothing requested)
    TAIL      waiting for critic tail rows (PPO bootstrap at truncation / window end)
"""

from __future__ import annotations

# -- cfg ------------------------------------------------------------------------------------------
CFG_G = 0  # n_games (slots)
CFG_N = 1  # players
CFG_A = 2  # actions
CFG_O = 3  # flattened observation size
CFG_ROUTES = 4  # inference routes (1 shared, or one per player)
CFG_ARENAS = 5  # arenas per route
CFG_CAP = 6  # rows per arena (batch_size)
CFG_POLICY = 7  # POLICY_* code
CFG_LEARNER = 8  # LEARNER_* code
CFG_HEADS = 9  # Q heads
CFG_NSTEP = 10  # DQN n-step
CFG_HORIZON = 11  # engine truncation horizon in ticks (0 = none)
CFG_W = 12  # prediction width per row (H * A for Q, A + 1 for logits + value)
CFG_SIMUL = 13  # 1 for simultaneous games
CFG_KEYS = 14  # reward keys
CFG_CHANCE = 15  # max chance fan
CFG_SIMS = 16  # AlphaZero / Mcts simulations per decision
CFG_MAXDEPTH = 17  # tree depth cap (AlphaZero / Mcts)
CFG_TEMPDROP = 18  # plies sampled with the acting temperature
CFG_MAXN = 19  # 1: AlphaZero sequential_backup="maxn"
CFG_ACTBY = 20  # Mcts act_by: 0 value, 1 visits
CFG_NOISE = 21  # 1: AlphaZero root Dirichlet noise
CFG_DEPTH = 22  # Minimax depth
CFG_TOPK = 23  # Minimax beam width (0 = full width)
CFG_INTERIOR = 24  # TreeStrap interior_targets
CFG_NODES = 25  # tree nodes per slot
CFG_MAXROWS = 26  # rows one request of a slot can hold
CFG_CHOOSE = 27  # 1: PolicyHandle.choose — a finished search parks with its action (no step)
CFG_BUDGET = 28  # SelectiveExpectimax expansion budget
CFG_OPP = 29  # SelectiveExpectimax opponent model: 0 uniform, 1 distributional
CFG_RESAMPLE = 30  # 1: AlwaysResample on a game with chance: re-step every edge on each descent
CFG_SAMPLES = 31  # key multiplier of outcome children: Committed(samples) k, or FAN_MULT (ExpandAll)
CFG_EXPAND = 32  # 1: ExpandAll on a game with chance (simultaneous trees enumerate outcome fans)
CFG_CACHE = 33  # inference cache entries per partition (0 = off)
CFG_ALIASES = 34  # alias claims one arena can hold (its alias table rows)
CFG_LEAFB = 35  # AlphaZero / Mcts leaf_batch: leaves selected per inference round (1 = one simulation)
CFG_SB = 36  # start_buffer: reached states each slot keeps (0 = start_buffer off)
CFG_GB_K = 37  # GumbelAlphaZero max_num_considered_actions (root Gumbel-top-k)
CFG_GB_MIXED = 38  # GumbelAlphaZero use_mixed_value: unvisited actions completed by the mixed value
CFG_GB_RESCALE = 39  # GumbelAlphaZero rescale_values: completed Q min-max rescaled to [0, 1]
# Cohorts (reinfors/_runtime/cohorts.py): slots are grouped in fixed cohorts of CFG_COHORT slots
# (slot g is in cohort g // CFG_COHORT); each cohort has its own arena chain per route (internal
# route = route * CFG_COHORTS + cohort), and with CFG_COHORT_CLOSE a cohort's open arenas close
# when its last ready-or-running slot blocks or parks — so which rows go in which call is a
# function of counts, never of thread timing.  Its active-slot counter is ctl word
# CTL_BASE + 8 * (CFG_ROUTES + cohort).
CFG_COHORT = 40  # slots per cohort
CFG_COHORTS = 41  # cohorts (K): internal routes = routes x K
CFG_COHORT_CLOSE = 42  # 1: a quiescent cohort closes its open arenas (off with the inference cache)
CFG_SIZE = 48
FAN_MULT = 1 << 20  # outcome index space per joint action under ExpandAll

POLICY_EGQ = 0
POLICY_PPO = 1
POLICY_AZ = 2  # search policies from here on
POLICY_MCTS = 3
POLICY_MINIMAX = 4
POLICY_SELEXP = 5
POLICY_GUMBEL = 6  # GumbelAlphaZero (the "gumbel" kernel family: the AlphaZero tree, Gumbel selection)

LEARNER_DQN = 0
LEARNER_PPO = 1
LEARNER_AZ = 2
LEARNER_TS = 3

# -- fcfg (float64) -------------------------------------------------------------------------------
F_EPSILON = 0
F_GAMMA = 1
F_LAM = 2
F_BOOTSTRAP_P = 3
F_CPUCT = 4  # AlphaZero c_puct / Mcts uct_c
F_TEMP = 5  # acting temperature
F_NOISE_EPS = 6  # Dirichlet epsilon
F_NOISE_ALPHA = 7  # Dirichlet alpha
F_OW = 8  # TreeStrap outcome_weight
F_BETA = 9  # SelectiveExpectimax value-of-information weight
F_OPP_T = 10  # SelectiveExpectimax opponent softmax temperature
F_OPP_F = 11  # SelectiveExpectimax opponent probability floor
F_VLOSS = 12  # AlphaZero / Mcts virtual_loss (leaf_batch > 1)
F_PFRESH = 13  # start_buffer: probability that an episode starts fresh (from reset)
F_GB_SCALE = 14  # GumbelAlphaZero gumbel_scale (0: a deterministic search)
F_GB_CVISIT = 15  # GumbelAlphaZero c_visit (mctx maxvisit_init)
F_GB_CSCALE = 16  # GumbelAlphaZero c_scale (mctx value_scale)
FCFG_SIZE = 24

# -- ctl (atomic int64 words, one per cache line) -------------------------------------------------
C_TARGET = 0  # window target level T: slots park when they reach it
C_ABORT = 1  # 1: the window is being aborted (stream stop): slots park at their next decision
C_WGEN = 2  # the engine's weights generation (Engine.weights_updated bumps it; any thread writes)
C_FIREGEN = 3  # the weights generation of the fire being routed (read before its callback ran)
C_WAKE = 4  # a pipelined callback returned (the caller's thread sets it; the scheduler clears it)
C_INFLIGHT = 8  # slot tasks being processed by workers
C_REC = 16  # record pool cursor
C_REC_CAP = 24  # record pool capacity
C_EPISODES = 20  # episode log cursor (shares the record line: both move per record batch)
C_EMITTED = 18  # records emitted in the current window
C_ERROR = 32  # first error code raised inside a kernel (0 = none)
C_FULL = 40  # arenas closed full since the scheduler last looked
C_STOP = 48  # workers exit when set
C_PARKED = 56  # slots parked at the target
C_ROUTE_CUR = 64  # + 8 * route: index of the route's open arena
C_ROUTE_HITS = 65  # + 8 * route: gated cache hits posted and not yet released
C_ROUTE_TGT = 66  # + 8 * route: rows at which a writer closes the route's open arena (fire target)
CTL_BASE = 64

# kernel error codes (C_ERROR)
ERR_REC_OVERFLOW = 1
ERR_NO_ARENA = 2
ERR_TRAJ_OVERFLOW = 3
ERR_SPAN_OVERFLOW = 4
ERR_TREE_OVERFLOW = 5

# -- slot status ----------------------------------------------------------------------------------
ST_EMIT = 0
ST_WAIT = 1
ST_RESUME = 2
ST_PARK = 3
ST_TAIL = 4

# -- messages (ring records of MSG_W int64 words) -------------------------------------------------
MSG_W = 7
MSG_EMITTED = 1  # (kind, slot, route, arena, start, rows, row offset): a committed span
MSG_COMPLETED = 2  # (kind, slot, level, records emitted this window, 0, 0, 0): parked at the target
MSG_HIT = 3  # (kind, slot, route, row, generation, 0, 0): a gated ticket (value already in preds)
MSG_ALIAS = 4  # (kind, slot, route, arena, twin row or -1 if abandoned, row, 0): an alias claim

# -- per-slot int64 info columns (sinfo: [G, SI_SIZE]) ---------------------------------------------
SI_STATUS = 0
SI_LEVEL = 1  # decisions completed by this slot since the engine started
SI_NACT = 2  # acting agents this decision
SI_OBSERVED = 3  # 1 when the observation phase of the current level is done
SI_HEAD = 4  # Q head of the current episode
SI_SEQ = 5  # records emitted by this slot (ordering key)
SI_EPLEN = 6  # ticks of the current episode
SI_NTAIL = 7  # tail rows requested
SI_TAILKIND = 8  # 1 = truncation tail, 2 = window tail
SI_ROWS = 9  # rows requested this round
SI_WINREC = 10  # records this slot emitted in the current window
SI_VIEW = 11  # the cache view this slot's running task pinned
SI_SEARCH = 12  # 1 while a tree search of the current decision is under way
SI_SIMS = 13  # simulations started in this search
SI_NNODES = 14  # tree nodes in use
SI_LEAF = 15  # node waiting for its evaluation rows
SI_PLEN = 16  # selection path length
SI_NFRONT = 17  # Minimax: frontier length
SI_FBUF = 18  # Minimax: which list buffer holds the frontier
SI_NNEW = 19  # Minimax: rows requested this round
SI_MAXD = 20  # deepest node of this search
SI_TERMS = 21  # terminal simulations of this search
SI_CAPS = 22  # depth-capped simulations of this search
SI_LEAVES = 23  # evaluated leaves of this search
SI_ROUNDS = 24  # inference rounds of this search
SI_EXPS = 25  # expansions of this search
SI_CHOICE = 26  # choose mode: the action the finished search chose
SI_NOPP = 27  # SelectiveExpectimax: opponent rows requested this round
SI_NBATCH = 28  # SelectiveExpectimax: nodes expanded this round
SI_FANCODE = 29  # ExpandAll: the joint action whose outcome fan is being evaluated
SI_FAN0 = 30  # ExpandAll: first node of that fan (its nodes are contiguous)
SI_FANN = 31  # ExpandAll: fan size (0 = no fan pending)
SI_SXJ = 32  # SelectiveExpectimax on a simultaneous game: the acting agent searching now
SI_GEN = 33  # weights generation of the last predictions routed to this slot (records stamp it)
SI_SIZE = 34

# sb_meta columns (start_buffer, per slot)
SB_STORED = 0  # reached states held (<= CFG_SB)
SB_SEEN = 1  # reached states offered so far (the reservoir's count)
SB_SEEDED = 2  # 1: the slot's current episode started from a reached state
SB_SIZE = 4

# -- record meta columns (r_meta: [M, RM_SIZE] int64) ----------------------------------------------
RM_LEVEL = 0
RM_SLOT = 1
RM_SEQ = 2
RM_PLAYER = 3
RM_ACTION = 4
RM_FLAGS = 5  # bit 0 done, bit 1 can_bootstrap
RM_GEN = 6  # weights generation of the decision's last inference (the batch's weights_generations)
RM_NTGT = 7  # r_tgt columns the record holds: its leading ones (AlphaZero: one per legal action)
RM_SIZE = 8

# record float columns (r_f: [M, RF_SIZE] float64)
RF_REWARD = 0  # DQN n-step reward
RF_DISCOUNT = 1  # DQN gamma**k (0 when not bootstrappable)
RF_LOGP = 2  # PPO behaviour log-prob
RF_ADV = 3  # PPO advantage
RF_RET = 4  # PPO return
RF_VALUE = 5  # PPO critic value at decision time
RF_RAW = 6  # rewards credited to this decision (until the player's next own decision)
RF_Z = 7  # AlphaZero / TreeStrap: discounted realised return
RF_WEIGHT = 8  # AlphaZero policy weight (1 mover row, 0 value-only row)
RF_SIZE = 9

# -- telemetry counters (tele: [TL_SIZE] int64, per worker row) ------------------------------------
TL_DECISIONS = 0
TL_REQUESTED = 1
TL_TAIL = 2
TL_TERMSIMS = 3
TL_DEPTHCAP = 4
TL_EXTRA = 5  # extra evaluation rows (maxn: N - 1 per evaluation)
TL_LEAVES = 6
TL_ROUNDS = 7
TL_EXPANSIONS = 8
TL_MAXDEPTH = 9  # max (not a sum): the scheduler zeroes it per window
TL_SEARCHES = 10  # searches finished (decisions with a tree)
TL_LOOKUPS = 11  # cache lookups (rows requested with the cache on)
TL_HITS = 12  # cache hits (gated tickets)
TL_ALIASES = 13  # request-local alias tickets (a row identical to an earlier row of the same request)
TL_SIZE = 16

# -- tree node int columns (t_ni: [G, M, TN_SIZE]) and edge float columns (t_ef: [G, M, A, EF]) --
TN_MOVER = 0
TN_DEPTH = 1
TN_TERM = 2
TN_EVAL = 3  # evaluated (prior / value known)
TN_TOTAL = 4  # visits through the node
TN_EXP = 5  # Minimax: expanded
TN_FULL = 6  # Minimax: expanded full width (not beamed); SelectiveExpectimax: a max node
TN_OPP = 7  # SelectiveExpectimax: the opponent row of this node in the round's request
TN_FIRST = 8  # simultaneous games: first child (children are a linked list keyed by joint action)
TN_NEXT = 9  # simultaneous games: next sibling
TN_JOINT = 10  # simultaneous games: the joint action code leading here (sum a_p * A**p)
TN_ALIVE = 11  # simultaneous games: bit mask of the agents acting at this node
TN_NOUT = 12  # sequential in-step chance: a chance node's outcome children (contiguous after it); 0 otherwise
TN_NLEG = 13  # sequential games: legal actions of the node (its edge list t_edges[g, c, :TN_NLEG])
TN_SIZE = 14
EF_PRIOR = 0  # PUCT prior (Minimax top_k: the head-mean Q row; SelectiveExpectimax: branch weight)
EF_VSUM = 1
EF_REW = 2  # the mover's edge reward (SelectiveExpectimax: the searcher's)
EF_RALL = 3  # maxn: every agent's edge reward (N columns)

# -- per-slot float telemetry (ftele: [G, FT_SIZE] float64; the scheduler zeroes 0-1 per window) --
FT_SIGMA = 0  # sum over searches of the mean leaf sigma
FT_DISAGREE = 1  # sum over searches of the root head disagreement
FT_SEARCH_SIGMA = 2  # the running search's leaf sigma sum
FT_SIZE = 4

# -- inference cache control words (cctl: int64, one word per 8 so writers never share a line) ---
CC_VIEW = 0  # the published view (0 or 1): workers pin it at task start
CC_PIN = 8  # + 8 * view: tasks currently reading that view
CC_LOGN = 24  # insert-log entries pending
CC_APPLIED = 32  # + 8 * view: log entries already applied to that view
CC_DEMOTED = 48  # gated tickets demoted (re-emitted as rows) since the engine started
CC_RELEASED = 56  # gated tickets released by the stall ladder
CC_DROPPED = 64  # inserts dropped because the log was full (a view stayed pinned)
CC_ALIASES = 72  # alias tickets claimed on in-flight arena rows
CC_GEN = 80  # + 8 * partition: the partition's weights generation
CC_BASE = 80  # cctl size: CC_BASE + 8 * partitions
