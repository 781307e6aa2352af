"""Importing the package makes oneMKL's matrix products independent of the number of torch threads.

Each case runs in a fresh interpreter: oneMKL reads ``MKL_CBWR`` once, at its first call in a process.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PRODUCT_ON_ONE_AND_TWO_THREADS = """
import agentgym_budget, os, torch
generator = torch.Generator().manual_seed(0)
inputs = torch.randn(300, 128, generator=generator, requires_grad=True)
weights = torch.randn(1024, 128, generator=generator)  # a tiny model's output layer
gradients = []
for threads in (1, 2):
    torch.set_num_threads(threads)
    inputs.grad = None
    (torch.nn.functional.linear(inputs, weights) * torch.linspace(0, 1, 300 * 1024).view(300, 1024)).sum().backward()
    gradients.append(inputs.grad.clone())
print(os.environ["MKL_CBWR"], torch.equal(*gradients))
"""


def _python(code: str, **environment: str) -> str:
    variables = {k: v for k, v in os.environ.items() if k != "MKL_CBWR"} | environment
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=variables, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_package_asks_for_reproducible_products_and_keeps_a_users_choice() -> None:
    code = "import agentgym_budget, os; print(os.environ['MKL_CBWR'])"
    assert _python(code) == "AUTO,STRICT"
    assert _python(code, MKL_CBWR="AUTO") == "AUTO"


@pytest.mark.slow
def test_a_layers_backward_pass_gives_the_same_bits_on_one_and_on_two_threads() -> None:
    pytest.importorskip("torch")
    assert _python(PRODUCT_ON_ONE_AND_TWO_THREADS) == "AUTO,STRICT True"
