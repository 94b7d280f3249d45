"""Solve Leduc poker with CFR+ and print the exploitability curve.

    python examples/cfr_leduc.py [iterations]

The tree (9,457 nodes, 936 information states) is enumerated once from the game's kernels;
each iteration is then a handful of array passes.  Exploitability = NashConv / players; the
first row (0 iterations: the average strategy is still uniform) is the uniform policy's, the
baseline the curve falls from towards 0, and EV(P0) approaches Leduc's game value for the
first player (about -0.0856).
"""

import sys
import time

import reinfors as rf

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
solver = rf.solvers.Cfr(rf.games.LeducPoker(), variant="plus")
start = time.perf_counter()
done = 0
checkpoint = 1
print(f"{'iterations':>10}  {'exploitability':>14}  {'EV(P0)':>9}  seconds")
print(f"{0:>10}  {solver.exploitability():>14.6g}  {solver.expected_value(0):>9.5f}  {time.perf_counter() - start:7.2f}  (uniform policy)")
while done < iterations:
    solver.iterate(min(checkpoint, iterations) - done)
    done = solver.iterations
    print(f"{done:>10}  {solver.exploitability():>14.6g}  {solver.expected_value(0):>9.5f}  {time.perf_counter() - start:7.2f}")
    checkpoint *= 2
# key: [agent, card, public card or 255, round-1 length, *round 1, round-2 length, *round 2]
jack_opening = bytes([0, 0, 255, 0, 0])
print(f"{solver.num_infosets} information states; P0 holding a jack, first to act (fold, call, raise):")
print("  ", solver.average_strategy(jack_opening))
