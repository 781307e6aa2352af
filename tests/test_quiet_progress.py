"""``quiet_progress`` turns the model libraries' bars off for a block and gives them back after it.

Each case runs in a fresh interpreter: what matters is whether a library is first imported inside the block.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

from agentgym_budget.runner.quiet import quiet_progress

pytest.importorskip("datasets")
pytest.importorskip("transformers")

SCRIPT = """
{before}
from agentgym_budget.runner.quiet import quiet_progress
with quiet_progress():
    from transformers.utils import logging as hf_logging
    import huggingface_hub.utils as hub
    import datasets
    inside = (hf_logging.is_progress_bar_enabled(), not hub.are_progress_bars_disabled(),
              not datasets.are_progress_bars_disabled())
after = (hf_logging.is_progress_bar_enabled(), not hub.are_progress_bars_disabled(),
         not datasets.are_progress_bars_disabled())
print(inside, after)
"""


def _run(environment: dict[str, str], before: str = "") -> subprocess.CompletedProcess[str]:
    return _python(SCRIPT.format(before=before), environment)


def _python(script: str, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    variables = {k: v for k, v in os.environ.items() if not k.endswith("_DISABLE_PROGRESS_BARS")}
    return subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**variables, **environment},
        check=False,
    )


@pytest.mark.slow
def test_libraries_first_imported_inside_the_block_get_their_bars_back_without_a_warning() -> None:
    done = _run({})
    assert done.returncode == 0, done.stderr[-2000:]  # the libraries' "Cannot enable progress bars" is an error here
    assert done.stdout.split() == ["(False,", "False,", "False)", "(True,", "True,", "True)"]


@pytest.mark.slow
def test_bars_the_environment_turned_off_stay_off_after_the_block() -> None:
    done = _run({"HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["(False,", "False,", "False)", "(False,", "False,", "False)"]


@pytest.mark.slow
def test_a_hub_imported_before_the_block_keeps_the_bars_of_libraries_imported_inside_it_off() -> None:
    done = _run({}, before="import huggingface_hub.utils.tqdm")  # it read the variable, unset, before the block
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["(False,", "False,", "False)", "(True,", "True,", "True)"]


def test_the_libraries_deprecations_to_each_other_are_hidden_with_the_bars_on_too() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet_progress(quiet=False):
            warnings.warn_explicit("old", FutureWarning, "modeling_utils.py", 1, module="transformers.modeling_utils")
            warnings.warn_explicit("ours", FutureWarning, "study.py", 1, module="agentgym_budget.study.run")
    assert [str(warning.message) for warning in caught] == ["ours"]


@pytest.mark.slow
def test_the_block_gives_each_library_back_the_setting_it_had_even_when_they_differ() -> None:
    script = """
import huggingface_hub.utils as hub
from transformers.utils import logging as hf_logging
from agentgym_budget.runner.quiet import quiet_progress
hub.disable_progress_bars()
hf_logging._tqdm_active = True  # the hub's bars off, transformers' own on
with quiet_progress():
    pass
print(hf_logging.is_progress_bar_enabled(), hub.are_progress_bars_disabled())
"""
    done = _python(script, {})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]  # restoring transformers' bars did not turn the hub's on
