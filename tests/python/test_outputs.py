"""Outputs that behave as their names ask: a trace named .json.gz is gzipped (Perfetto opens it
as it is) and read back by tilecc report; a chart named .svg or .pdf is drawn in that format."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tilecc.testing import run_cli

WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"


@pytest.fixture(scope="module")
def gzipped_trace(tmp_path_factory) -> Path:
    trace = tmp_path_factory.mktemp("trace") / "t.json.gz"
    run = run_cli("run", str(WATER), "--basis", "sto-3g", "--trace", str(trace))
    assert run.returncode == 0, run.stdout
    return trace


def test_a_gz_trace_is_gzipped_json(gzipped_trace):
    data = json.loads(gzip.decompress(gzipped_trace.read_bytes()))
    assert data["traceEvents"] and data["otherData"]["threads"] >= 1


@pytest.mark.parametrize(
    ("suffix", "magic"), [(".svg", b"<?xml"), (".pdf", b"%PDF"), (".png", b"\x89PNG")]
)
def test_report_reads_it_and_draws_the_format_asked_for(gzipped_trace, tmp_path, suffix, magic):
    chart = tmp_path / f"chart{suffix}"
    run = run_cli("report", str(gzipped_trace), "--png", str(chart))
    assert run.returncode == 0, run.stdout
    assert chart.read_bytes().startswith(magic)


def test_benchmark_records_are_appended_with_what_they_were_measured_on(tmp_path):
    from tilecc import measure

    path = tmp_path / "results" / "bench.jsonl"  # the folder is made
    measure.write_json_lines(path, [{"case": "a", "seconds": 1.0}])
    measure.write_json_lines(path, [{"case": "b", "seconds": 2.0}, {"case": "c"}])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["case"] for line in lines] == ["a", "b", "c"]
    for line in lines:
        assert line["commit"] and line["machine"] and line["date"]


def test_report_tells_imbalance_from_gaps():
    """Two workers in a 10 ms run: worker 0 busy throughout; worker 1 busy 0-4 and 6-8 ms, so
    idle 2 ms between its tasks and 2 ms at the end."""
    from tilecc.report import granularity_table, idle_explained
    from tilecc.trace import _summarise

    def phase(worker: int, start_ms: float, end_ms: float) -> dict:
        return {
            "ph": "X", "cat": "phase", "name": "gemm", "tid": worker, "ts": 1e3 * start_ms,
            "dur": 1e3 * (end_ms - start_ms), "args": {"run": 0, "segment": 0},
        }  # fmt: skip

    run = {
        "ph": "X", "cat": "run", "name": "C", "tid": 10_000, "ts": 0.0, "dur": 1e4,
        "args": {"run": 0, "contractions": ["C"], "workers": 2},
    }  # fmt: skip
    events = [run, phase(0, 0, 10), phase(1, 0, 4), phase(1, 6, 8)]
    for number, e in enumerate(events[1:]):
        e["args"]["task"] = number  # tasks of 10, 4 and 2 ms
    summary = _summarise(events, threads=2, policy="counter")
    assert summary.idle_at_end == pytest.approx(2e-3)
    assert summary.idle_between == pytest.approx(2e-3)
    text = idle_explained(summary)
    assert "4.00 worker-ms, 50% at the ends of runs" in text
    assert "50% between a worker's tasks" in text
    assert sorted(summary.task_seconds) == pytest.approx([2e-3, 4e-3, 10e-3])
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(granularity_table(summary))
    rows = " ".join(console.export_text().replace("│", " ").split())
    # One task in each of three octaves (of microseconds), by count and by time.
    assert "1 33.3% 12.5%" in rows and "1 33.3% 25.0%" in rows and "1 33.3% 62.5%" in rows


def test_charts_without_matplotlib_are_one_sentence(monkeypatch):
    import importlib.util

    from tilecc import report

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else found(name)
    )
    with pytest.raises(ValueError, match=r"pip install 'tilecc\[plot\]', or leave out --png"):
        report.check_charts_available()
