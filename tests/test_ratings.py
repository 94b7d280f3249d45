"""``rf.ratings``: Elo fits and the SPRT against known answers (pure NumPy; no games played).

Synthetic results are drawn (seeded) from known Elo gaps and draw rates; the fitted intervals must
cover the truth at about their stated rate, and the SPRT's error rates must hold.  Every trial is
seeded, so the counts below are fixed numbers; the tolerances are several binomial standard
errors wide, so a change of seed would not fail them either.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import reinfors as rf
from reinfors.ratings import Record, Results, Sprt, elo_to_score, fit, score_to_elo

TRUE = np.array([0.0, 60.0, -120.0, 200.0])
NAMES = ["A", "B", "C", "D"]


def _wdl(rng, gap, n, draw_share):
    """W/D/L of ``n`` games at Elo ``gap`` with a draw rate of ``draw_share * min(s, 1-s)``."""
    s = float(elo_to_score(gap))
    d = draw_share * min(s, 1.0 - s)
    return rng.multinomial(n, [s - d / 2, d, 1.0 - s - d / 2])


def _synthetic(rng, n_games, draw_share, anchor="A"):
    res = Results(NAMES)
    for i in range(4):
        for j in range(i + 1, 4):
            res.add(NAMES[i], NAMES[j], *_wdl(rng, TRUE[i] - TRUE[j], n_games, draw_share))
    return fit(res, anchor=anchor, prior_draws=0)


def test_elo_score_conversions():
    assert elo_to_score(0) == 0.5
    assert elo_to_score(400) == pytest.approx(10 / 11)
    assert score_to_elo(elo_to_score(123.0)) == pytest.approx(123.0)
    assert score_to_elo(0.76) == pytest.approx(200.0, abs=1.0)


def test_two_players_recover_the_elo_of_the_score_exactly():
    """With two contestants the half-point MLE is the Elo of the observed score."""
    r = fit([("x", "y", 60, 20, 20)], anchor="y", prior_draws=0)
    assert r["x"][0] == pytest.approx(score_to_elo(0.7), abs=1e-6)
    assert r["y"] == (0.0, 0.0)
    assert r.gap("y", "x")[0] == pytest.approx(-score_to_elo(0.7), abs=1e-6)
    # without draws the interval is the inverse Fisher information: n p (1-p) (ln10/400)^2
    r = fit([("x", "y", 70, 0, 30)], anchor="y", prior_draws=0)
    se = 1 / math.sqrt(100 * 0.7 * 0.3 * (math.log(10) / 400) ** 2)
    assert r["x"][1] == pytest.approx(1.959964 * se, rel=1e-4)


def test_draws_narrow_the_interval_at_equal_score():
    """60 % from wins and losses is noisier than 60 % from wins and draws (sandwich variance)."""
    decisive = fit([("x", "y", 60, 0, 40)], anchor="y", prior_draws=0)
    drawish = fit([("x", "y", 20, 80, 0)], anchor="y", prior_draws=0)
    assert decisive["x"][0] == pytest.approx(drawish["x"][0])
    assert drawish["x"][1] < 0.5 * decisive["x"][1]


@pytest.mark.parametrize("draw_share", [0.0, 0.6])
def test_intervals_cover_the_true_gaps_at_the_stated_rate(draw_share):
    rng = np.random.default_rng(2026 + int(draw_share * 10))
    hits = total = 0
    err = np.zeros(3)
    trials = 400
    for _ in range(trials):
        r = _synthetic(rng, 100, draw_share)
        d = r.elo[1:] - TRUE[1:]
        hits += int(np.sum(np.abs(d) <= r.ci[1:]))
        total += 3
        err += d
    coverage = hits / total
    # 1200 interval checks: a binomial standard error of 0.6 %; allow about 3.5 of them
    assert 0.93 <= coverage <= 0.97, coverage
    assert np.all(np.abs(err / trials) < 6.0), err / trials  # unbiased to a few Elo (CI ~ ±45)


def test_confidence_level_scales_the_interval():
    rng = np.random.default_rng(5)
    res = Results(NAMES)
    for i in range(4):
        for j in range(i + 1, 4):
            res.add(NAMES[i], NAMES[j], *_wdl(rng, TRUE[i] - TRUE[j], 50, 0.3))
    r95, r68 = fit(res, "A", confidence=0.95), fit(res, "A", confidence=0.6827)
    assert np.allclose(r95.elo, r68.elo)
    assert np.allclose(r95.ci[1:] / r68.ci[1:], 1.959964, rtol=1e-3)


def test_the_anchor_only_shifts_ratings():
    rng = np.random.default_rng(7)
    a = _synthetic(rng, 80, 0.3, anchor="A")
    rng = np.random.default_rng(7)
    c = _synthetic(rng, 80, 0.3, anchor="C")
    assert np.allclose(a.elo - a.elo[2], c.elo, atol=1e-6)
    assert c["C"] == (0.0, 0.0) and a.gap("B", "D") == pytest.approx(c.gap("B", "D"))


def test_prior_draws_keep_a_perfect_score_finite():
    with pytest.raises(ValueError, match="prior_draws > 0"):
        fit([("x", "y", 10, 0, 0)], prior_draws=0)
    r = fit([("x", "y", 10, 0, 0)], anchor="y")
    assert 300 < r["x"][0] < 1000 and math.isfinite(r["x"][1])


def test_table_json_csv():
    res = Results()
    res.add("new", "old", 30, 40, 30)
    res.add("old", "random", 90, 5, 5)
    res.add("new", "random", 95, 0, 5)
    r = res.fit(anchor="random")
    assert [row["name"] for row in r.rows()] == ["new", "old", "random"]
    assert res.totals("old") == Record("old", "*", 120, 45, 35)
    text = r.table()
    assert "anchor" in text and "new" in text.splitlines()[2]
    doc = json.loads(r.to_json())
    assert doc["anchor"] == "random" and len(doc["pairings"]) == 3
    assert doc["ratings"][0]["elo"] == pytest.approx(r["new"][0])
    lines = r.to_csv().splitlines()
    assert lines[0] == "name,games,wins,draws,losses,score,elo,ci" and lines[3].startswith("random,200,10,5,185")


def test_plot_when_matplotlib_is_installed():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    r = fit([("x", "y", 60, 20, 20), ("y", "z", 50, 10, 40)])
    ax = r.plot(order=["z", "y", "x"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["z", "y", "x"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: fit([("x", "y", 1, 1, 1)], anchor="z"), "anchor 'z' is not a contestant"),
        (lambda: fit([("x", "y", 1, 1, 1)], confidence=1.0), "confidence must be in"),
        (lambda: fit([("x", "y", 1, 1, 1)], prior_draws=-1), "prior_draws must be"),
        (lambda: fit([("x", "y", 1, 1, 1), ("u", "v", 1, 1, 1)]), "one connected pool"),
        (lambda: fit([]), "at least two contestants"),
        (lambda: Results().add("x", "x", 1), "cannot play itself"),
        (lambda: Results().add("x", "", 1), "non-empty strings"),
        (lambda: Results().add("x", "y", -1), "wins must be >= 0"),
        (lambda: Results().add("x", "y", 1, 0.5), "draws must be a non-negative integer"),
        (lambda: fit([("x", "y", 1, 1, 1)])["q"], "unknown contestant 'q'"),
        (lambda: Sprt(elo0=10, elo1=0), "elo1 must be > elo0"),
        (lambda: Sprt(elo0=float("nan")), "elo0 must be a finite number"),
        (lambda: Sprt(alpha=0), "alpha must be in"),
        (lambda: Sprt(beta=1.5), "beta must be in"),
        (lambda: Sprt(alpha=0.6, beta=0.6), "alpha \\+ beta must be < 1"),
        (lambda: Sprt(prior_units=-1), "prior_units must be"),
        (lambda: Sprt().update([0.5, 2.0]), "scores must be finite numbers in \\[0, 1\\]"),
    ],
)
def test_validation_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# -- SPRT ----------------------------------------------------------------------------------------


def _sprt_runs(rng, elo, trials, elo0=0.0, elo1=30.0, alpha=0.05, beta=0.05):
    s = float(elo_to_score(elo))
    d = 0.6 * min(s, 1 - s)
    decisions, lengths = [], []
    for _ in range(trials):
        t = Sprt(elo0, elo1, alpha, beta)
        while t.decision is None:
            t.update(rng.choice([1.0, 0.5, 0.0], size=256, p=[s - d / 2, d, 1 - s - d / 2]))
        decisions.append(t.decision)
        lengths.append(t.n)
    return np.array(decisions), np.array(lengths)


def test_sprt_error_rates_hold_on_simulated_matches():
    rng = np.random.default_rng(32)
    at0, n0 = _sprt_runs(rng, 0.0, 600)
    at1, n1 = _sprt_runs(rng, 30.0, 600)
    false_accept, false_reject = np.mean(at0 == "H1"), np.mean(at1 == "H0")
    # nominal 5 % each; 600 trials: a standard error of 0.9 %
    assert false_accept <= 0.075 and false_reject <= 0.075, (false_accept, false_reject)
    # and the test is sequential: far-off strengths decide much sooner than the borderline
    far, n_far = _sprt_runs(rng, 150.0, 100)
    assert np.all(far == "H1") and np.median(n_far) < np.median(n1) / 4


def test_sprt_stops_at_the_first_crossing_and_stays_decided():
    rng = np.random.default_rng(1)
    x = rng.choice([1.0, 0.5, 0.0], size=2000, p=[0.6, 0.2, 0.2])
    whole, single = Sprt(0, 20), Sprt(0, 20)
    whole.update(x)
    for v in x:
        if single.update([v]) is not None:
            break
    assert whole.decision == single.decision == "H1"
    assert whole.n == single.n < 2000 and whole.llr == pytest.approx(single.llr)
    assert whole.update(np.zeros(500)) == "H1" and whole.n == single.n
    assert "decision=H1" in repr(whole)


def test_sprt_update_wdl_and_identical_scores_do_not_decide_at_once():
    t = Sprt(0, 10)
    assert t.update_wdl(wins=3) is None  # three wins are no proof (regularised variance)
    assert t.n == 3 and t.score == 1.0 and t.lower < t.llr < t.upper


def test_submodule_is_public():
    assert rf.ratings.fit is fit and rf.ratings.Sprt is Sprt
