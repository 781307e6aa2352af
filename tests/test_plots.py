"""Plots: equal curves stay visible, no line across depths without states, formats png/pdf/svg."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentgym_budget.cli.main import main
from agentgym_budget.eval.passkt.plots import passk_vs_k_figure, success_vs_budget_figure
from agentgym_budget.eval.passkt.summary import summarize
from agentgym_budget.eval.probes.plots import accuracy_by_depth_figure
from agentgym_budget.eval.probes.summary import summarize_probes


def _grids(wins_b: int) -> list:
    """Grids of agents ``a`` and ``b``; ``b`` wins like ``a`` when ``wins_b == 1``."""
    records = [
        {"agent": agent, "env_id": "e", "task_id": f"t{t}", "sample": s, "budget": budget, "mode": "independent",
         "won": (s + t) % (2 if agent == "a" else 2 * wins_b) == 0, "turns": 5}
        for agent in "ab" for t in range(3) for s in range(4) for budget in (5, 10)
    ]  # fmt: skip
    return summarize(records, ks=[1, 2, 4], budgets=[5, 10], resamples=100).grids


def _lines(axis) -> list:
    return [line for line in axis.get_lines() if not line.get_label().startswith("_")]


@pytest.mark.slow
@pytest.mark.parametrize("figure_of", [passk_vs_k_figure, success_vs_budget_figure])
def test_two_agents_with_the_same_curves_stay_visible_and_the_legend_says_so(figure_of) -> None:
    grids = _grids(wins_b=1)
    assert np.array_equal(grids[0].estimate, grids[1].estimate)
    figure = figure_of(grids)
    for axis in figure.axes[: len(grids[0].budgets if figure_of is passk_vs_k_figure else grids[0].ks)]:
        first, second = _lines(axis)
        assert not np.array_equal(first.get_xdata(), second.get_xdata())  # shifted apart
        assert first.get_marker() != second.get_marker() and first.get_linestyle() != second.get_linestyle()
    legend = [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend == ["a", "b (same as a)"]


def test_different_curves_get_no_same_as_note() -> None:
    figure = passk_vs_k_figure(_grids(wins_b=2))
    assert [text.get_text() for text in figure.legends[0].get_texts()] == ["a", "b"]


def test_the_depth_plot_draws_no_line_across_depths_without_states() -> None:
    rows = [
        {"agent": agent, "env_id": "e", "family": "f", "state_id": f"s{depth}", "depth": depth, "sample": 0,
         "optimal": depth % 2 == 0, "value": 1.0, "progress_delta": 0.0}
        for agent in ("x", "y") for depth in (0, 1, 4, 5, 9)
    ]  # fmt: skip
    figure = accuracy_by_depth_figure(summarize_probes(rows, resamples=100))
    for axis in figure.axes:
        for line in _lines(axis):
            xs, ys = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
            gaps = np.flatnonzero(np.isnan(ys))
            assert [round(xs[i - 1]) for i in gaps] == [1, 5], ys  # the line breaks after depths 1 and 5
            assert [round(x) for x, y in zip(xs, ys, strict=True) if not np.isnan(y)] == [0, 1, 4, 5, 9]


@pytest.mark.slow
def test_plot_formats_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    records = [
        {"agent": "random", "env_id": "agentgym_budget/TextWorld-CoinCollector-v0", "env_kwargs": {"level": 3},
         "split": "train", "task_id": f"coin-l3-{t}", "mode": "independent", "show_budget": False, "budget": 10,
         "sample": s, "seed": s, "won": s == t, "turns": 10}
        for t in range(2) for s in range(2)
    ]  # fmt: skip
    (run / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out), "--plot-format", "pdf,svg", "--bootstrap", "100"]) == 0
    plots = sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".pdf", ".svg"))
    assert plots == sorted(
        f"{stem}.{fmt}" for stem in ("heatmap", "passk_vs_K", "success_vs_T") for fmt in ("pdf", "svg")
    )
    assert (out / "heatmap.pdf").read_bytes()[:4] == b"%PDF" and b"<svg" in (out / "heatmap.svg").read_bytes()[:400]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["report", str(run), "--out", str(out), "--plot-format", "jpg"])
    assert "Unknown plot format 'jpg'. Did you mean 'png'?" in capsys.readouterr().err
    for command in ("passkt", "probe", "recovery"):
        assert "--plot-format" in _help(command, capsys)


def _help(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return capsys.readouterr().out
