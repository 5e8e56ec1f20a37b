"""The fast tier's guard (tests/tiers.py) in a pytest run of its own: an unmarked test that
starts a process fails and names it; the same test marked ``crawl`` passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SAMPLE = """
import subprocess, sys

import pytest


def test_unmarked():
    subprocess.run([sys.executable, "-c", "pass"], check=False)


def test_unmarked_survives_the_refusal():
    try:
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    except RuntimeError:
        pass  # as a worker pool falls back to working in-process


@pytest.mark.crawl
def test_marked():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_in_process():
    assert sum(range(4)) == 6
"""


@pytest.mark.crawl
def test_only_tests_marked_crawl_start_processes(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "from tests.tiers import pytest_configure, pytest_runtest_call, pytest_runtest_setup\n"
    )
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert "2 failed, 2 passed" in run.stdout, run.stdout
    failed = {line.split()[1] for line in run.stdout.splitlines() if line.startswith("FAILED ")}
    assert failed == {
        "test_sample.py::test_unmarked",
        "test_sample.py::test_unmarked_survives_the_refusal",
    }
    assert (
        "test_sample.py::test_unmarked is not marked crawl: it may not start python" in run.stdout
    )
    assert "starts processes (python) but is not marked crawl" in run.stdout
