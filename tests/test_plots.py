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


def test_multi_panel_figures_keep_at_most_two_or_three_panels_a_row() -> None:
    """A figure shown at a page's width (about 740 px) stays legible: no row of four panels of 4 inches."""
    records = [
        {"agent": "a", "env_id": "e", "task_id": f"t{t}", "sample": s, "budget": budget, "mode": "independent",
         "won": (s + t) % 2 == 0, "turns": 5}
        for t in range(2) for s in range(8) for budget in (5, 10, 15, 20, 30)
    ]  # fmt: skip
    grids = summarize(records, ks=[1, 2, 4, 8], budgets=[5, 10, 15, 20, 30], resamples=100).grids
    for figure, columns in ((success_vs_budget_figure(grids), 2), (passk_vs_k_figure(grids), 3)):
        lefts = {round(axis.get_subplotspec().colspan.start) for axis in figure.axes if axis.get_visible()}
        assert len(lefts) == columns and figure.get_figwidth() <= 4.5 * columns


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


def _three_agent_summary():
    records = [
        {"agent": agent, "env_id": "agentgym_budget/TextWorld-CoinCollector-v0", "env_kwargs": {"level": 3},
         "split": "train", "task_id": f"t{t}", "sample": s, "budget": budget, "mode": "independent",
         "won": (s + t + i) % 3 == 0, "turns": 5}
        for i, agent in enumerate(["random", "expert", "noisy-expert"]) for t in range(5) for s in range(4)
        for budget in (5, 10, 20)
    ]  # fmt: skip
    return summarize(records, ks=[1, 2, 4], budgets=[5, 10, 20], resamples=100)


def _saved_layouts(summary, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict]:
    """``stem -> {"legend", "caption", "axes"}``: the artists' boxes (pixels) as the PNG was drawn."""
    from agentgym_budget.eval.passkt import plots
    from agentgym_budget.runner.outputs import output_set, plot_names

    layouts: dict[str, dict] = {}
    real_save = plots.save_figure

    def save(figure, paths):
        stem = Path(paths[0]).stem

        def record(event) -> None:
            texts = [a for a in [*figure.texts, *figure.artists] if "tasks x 4 samples" in str(a.get_text())]
            layouts[stem] = {
                "legend": [legend.get_window_extent(event.renderer) for legend in figure.legends],
                "caption": [text.get_window_extent(event.renderer) for text in texts],
                "axes": [axis.get_tightbbox(event.renderer) for axis in figure.axes if axis.get_visible()],
                "text": " ".join(str(text.get_text()) for text in texts),
            }

        figure.canvas.mpl_connect("draw_event", record)
        return real_save(figure, paths)

    monkeypatch.setattr(plots, "save_figure", save)
    with output_set(tmp_path, plot_names(plots.PLOT_STEMS)) as outputs:
        plots.write_plots(summary, outputs)
    return layouts


@pytest.mark.slow
def test_the_legend_covers_neither_the_caption_nor_the_panels(tmp_path: Path, monkeypatch) -> None:
    layouts = _saved_layouts(_three_agent_summary(), tmp_path, monkeypatch)
    assert sorted(layouts) == ["difference", "heatmap", "passk_vs_K", "success_vs_T"]
    for stem in ("success_vs_T", "passk_vs_K"):
        [legend], [caption] = layouts[stem]["legend"], layouts[stem]["caption"]
        assert not legend.overlaps(caption), f"{stem}: legend {legend} covers the caption {caption}"
        assert caption.y1 <= legend.y0, f"{stem}: the caption is not below the legend"
        for axis in layouts[stem]["axes"]:
            assert not legend.overlaps(axis), f"{stem}: legend {legend} covers a panel {axis}"
            assert not caption.overlaps(axis), f"{stem}: caption {caption} covers a panel {axis}"


@pytest.mark.slow
def test_captions_name_only_the_intervals_drawn(tmp_path: Path, monkeypatch) -> None:
    captions = {stem: layout["text"] for stem, layout in _saved_layouts(_three_agent_summary(), tmp_path,
                                                                           monkeypatch).items()}  # fmt: skip
    assert "band" not in captions["heatmap"] and "bracket" not in captions["heatmap"], captions["heatmap"]
    assert "point estimates" in captions["heatmap"]
    assert "band" not in captions["difference"] and "bracket" not in captions["difference"]
    assert "*:" in captions["difference"] and "paired t" in captions["difference"]
    for stem in ("success_vs_T", "passk_vs_K"):
        assert "bands: 95% intervals" in captions[stem] and "bracket" not in captions[stem], captions[stem]
