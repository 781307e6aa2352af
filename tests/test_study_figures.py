"""The study's figures as a reader sees them: both PNGs drawn, every agent in the legend, nothing overlapping,
captions that name the interval, the sizes, the machine, the load and the time (logs written by the test)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentgym_budget.study.figures import study_figures

TIMES = {
    "sft": {"wall_s": 600.0, "cpu_s": 590.0, "load_start": 1.1, "load_end": 1.3},
    "passkt": {"wall_s": 1200.0, "cpu_s": 2300.0, "load_start": 2.0, "load_end": 2.4},
}


def _study() -> dict:
    table, differences = [], []
    for budget in (3, 4, 6, 9):
        for index, agent in enumerate(("sft", "fixed", "budgetmix")):
            rate = 0.5 + 0.03 * budget - 0.05 * index
            table.append({"agent": agent, "budget": budget, "pass@1": rate, "low": rate - 0.1, "high": rate + 0.1,
                          "tasks": 32})  # fmt: skip
            if agent != "sft":
                differences.append({"pair": f"{agent} - sft", "budget": budget, "diff": -0.05 * index,
                                    "low": -0.05 * index - 0.04, "high": -0.05 * index + 0.04, "tasks": 32})  # fmt: skip
    agents = {"sft": "hf:sft/final", "fixed": "hf:fixed/final", "budgetmix": "hf:budgetmix/final"}
    return {"pass@1": table, "differences": differences, "agents": agents}


def _write_logs(out: Path) -> None:
    (out / "sft" / "sft").mkdir(parents=True)
    lines = [json.dumps({"step": step, "loss": 2.0 / step}) for step in range(1, 11)]
    (out / "sft" / "sft" / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    for arm in ("fixed", "budgetmix"):
        (out / arm / "rl").mkdir(parents=True)
        rows = [{"step": step, "reward": 0.6, "signal_groups": step % 2, "frac_reward_zero_std": 0.5}
                for step in range(1, 11)]  # fmt: skip
        (out / arm / "rl" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _layouts(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict]:
    from agentgym_budget.eval import figures

    layouts: dict[str, dict] = {}
    real_save = figures.save_figure

    def save(figure, path):
        def record(event) -> None:
            captions = [a for a in [*figure.texts, *figure.artists] if "CPUs" in str(a.get_text())]
            layouts[Path(path).name] = {
                "legend": [legend.get_window_extent(event.renderer) for legend in figure.legends],
                "labels": [text.get_text() for legend in figure.legends for text in legend.get_texts()],
                "caption": [text.get_window_extent(event.renderer) for text in captions],
                "text": " ".join(str(text.get_text()) for text in captions),
                "axes": [axis.get_tightbbox(event.renderer) for axis in figure.axes if axis.get_visible()],
            }

        figure.canvas.mpl_connect("draw_event", record)
        return real_save(figure, path)

    monkeypatch.setattr(figures, "save_figure", save)
    return layouts


@pytest.mark.slow  # draws two figures with matplotlib
def test_both_figures_show_every_run_without_overlap_and_name_the_run(tmp_path: Path, monkeypatch) -> None:
    _write_logs(tmp_path)
    layouts = _layouts(monkeypatch)
    config = SimpleNamespace(eval_samples=4)
    drawn = study_figures(tmp_path, config, _study(), TIMES)
    assert drawn == ["pass_at_1.png", "training.png"]
    for name in drawn:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        layout = layouts[name]
        [legend], [caption] = layout["legend"], layout["caption"]
        assert caption.y1 <= legend.y0 and not legend.overlaps(caption), name
        for axis in layout["axes"]:
            assert not legend.overlaps(axis) and not caption.overlaps(axis), name
        assert "load 1.1-2.4 (1-minute average)" in layout["text"], layout["text"]
        assert "study 30.0 min wall, 48.2 min CPU" in layout["text"], layout["text"]
    assert layouts["pass_at_1.png"]["labels"] == ["sft", "fixed", "budgetmix"]
    assert (
        "95% intervals (expanded BCa" in layouts["pass_at_1.png"]["text"]
        and "32 held-out test tasks x 4" in layouts["pass_at_1.png"]["text"]
    )
    assert layouts["training.png"]["labels"] == ["fixed", "budgetmix"]


def test_no_figure_before_any_stage_has_output(tmp_path: Path) -> None:
    study = {"pass@1": [], "differences": [], "agents": {"sft": "hf:sft/final"}}
    assert study_figures(tmp_path, SimpleNamespace(eval_samples=4), study, {}) == []
    assert not list(tmp_path.iterdir())


def test_study_md_shows_the_figures_that_were_drawn() -> None:
    from agentgym_budget.study.report import figure_lines

    assert figure_lines(["pass_at_1.png"], "pass_at_1.png", "Pass@1") == ["![Pass@1](pass_at_1.png)", ""]
    assert figure_lines(["pass_at_1.png"], "training.png", "curves") == []
