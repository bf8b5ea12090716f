"""Smoke runs of every example (seconds each: tiny slices, few steps, outputs in tmp dirs)."""

import csv
import json

import pytest

from .conftest import DATA, needs_fashion

SCRIPTS = ["xor", "scalar_autodiff", "mnist_mlp", "mnist_cnn", "mnist_curve", "report",
           "graph_picture"]
RESULT_KEYS = {"example", "metric", "value", "goal", "command", "wall_time_s", "cpu_time_s",
               "machine", "date", "seed"}


@pytest.mark.parametrize("name", SCRIPTS)
def test_help(example, name, capsys):
    with pytest.raises(SystemExit) as e:
        example(name).main(["--help"])
    assert e.value.code == 0
    assert "usage: python examples/" in capsys.readouterr().out


def test_xor(example, tmp_path):
    out = tmp_path / "xor.json"
    r = example("xor").main(["--steps", "30", "--seed", "1", "--out", str(out), "--no-progress"])
    assert json.loads(out.read_text()) == r and RESULT_KEYS <= set(r)
    assert r["command"].startswith("python examples/xor.py --steps 30")


def test_scalar_autodiff(example, tmp_path):
    dot = tmp_path / "g.dot"
    r = example("scalar_autodiff").main(["--out", str(tmp_path / "s.json"), "--dot", str(dot)])
    assert r["value"] < 1e-6
    text = dot.read_text()
    assert text.startswith("digraph") and "grad" in text and "tanh" in text


def test_graph_picture(example, tmp_path, capsys):
    written = example("graph_picture").main(["--dir", str(tmp_path)])
    names = {p.name for p in written}
    assert {"graph_mlp.dot", "graph_mlp_grad.dot", "graph_gpt.dot"} <= names
    mlp = (tmp_path / "graph_mlp.dot").read_text()
    assert mlp.startswith('digraph "mlp_loss"') and "grad " in mlp and "value " in mlp
    assert 'label="block_0 .. block_3 x4"' in (tmp_path / "graph_gpt.dot").read_text()
    assert "affine" in capsys.readouterr().out


def test_scalar_engine_accumulates_reused_values(example):
    sa = example("scalar_autodiff")
    x = sa.Value(3.0)
    y = x * x + x          # dy/dx = 2x + 1, x used three times
    y.backward()
    assert x.grad == 7.0


def mnist_args(tmp_path, *extra):
    return ["--data-dir", str(DATA / "fashion-mnist"), "--train-limit", "256",
            "--test-limit", "100", "--batch-size", "64", "--no-progress", *extra]


@needs_fashion
def test_mnist_mlp(example, tmp_path):
    out = tmp_path / "mlp.json"
    r = example("mnist_mlp").main(mnist_args(tmp_path, "--steps", "6", "--out", str(out)))
    assert 0.0 <= r["value"] <= 1.0 and r["goal"] == ">= 0.895"
    assert [h["epoch"] for h in r["history"]] == [1, 2] and r["history"][-1]["step"] == 6
    assert r["complete"] is True


@needs_fashion
def test_mnist_cnn_writes_partial_then_complete(example, tmp_path, monkeypatch):
    cnn = example("mnist_cnn")
    out, seen = tmp_path / "cnn.json", []
    write = cnn.write_result
    monkeypatch.setattr(cnn, "write_result", lambda *a, **k: seen.append(k["complete"])
                        or write(*a, **k))
    r = cnn.main(mnist_args(tmp_path, "--epochs", "2", "--out", str(out)))
    assert seen == [False, True] and r["complete"] and len(r["history"]) == 2
    assert r["parameters"] == 421642


@needs_fashion
def test_mnist_curve_trains_and_redraws(example, tmp_path):
    curve = example("mnist_curve")
    csv_path = tmp_path / "curve.csv"
    r = curve.main(mnist_args(tmp_path, "--steps", "6", "--csv", str(csv_path),
                              "--out", str(tmp_path / "c.json")))
    with csv_path.open() as f:
        rows = list(csv.DictReader(f))
    assert [int(row["epoch"]) for row in rows] == [1, 2]
    assert float(rows[-1]["test_accuracy"]) == pytest.approx(r["value"], abs=1e-4)
    pytest.importorskip("matplotlib")
    assert csv_path.with_suffix(".png").stat().st_size > 1000
    again = tmp_path / "again.csv"
    r2 = curve.main(["--from-result", str(tmp_path / "c.json"), "--csv", str(again),
                     "--out", str(tmp_path / "c2.json")])
    assert again.read_text() == csv_path.read_text() and r2["value"] == r["value"]


def test_mnist_without_data_says_where_to_put_files(example, tmp_path, monkeypatch):
    monkeypatch.setenv("FNAD_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(SystemExit, match="(?s)mnist_mlp: the fashion-mnist data are missing.*"
                                         "--data-dir.*FNAD_DATA_DIR"):
        example("mnist_mlp").main(["--data-dir", str(tmp_path / "empty"), "--steps", "1",
                                   "--out", str(tmp_path / "x.json")])


def test_report_rewrites_only_the_marked_block(example, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    base = {"command": "python examples/x.py", "wall_time_s": 12.3, "cpu_time_s": 20.0,
            "load_average": 1.5, "machine": "test box", "date": "2026-01-01", "seed": 0}
    (results / "a.json").write_text(json.dumps(
        {**base, "example": "mnist_cnn", "metric": "acc | accuracy", "value": 0.9,
         "goal": ">= 0.925", "complete": False, "history": [{}, {}]}))
    (results / "b.json").write_text(json.dumps(
        {**base, "example": "xor", "metric": "loss", "value": 1e-5, "goal": "< 0.001"}))
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- results:start -->\nold\n<!-- results:end -->\ntail\n")
    report = example("report")
    assert report.main(["--readme", str(readme), "--results", str(results), "--check"]) == 1
    assert report.main(["--readme", str(readme), "--results", str(results)]) == 0
    text = readme.read_text()
    assert text.startswith("intro\n<!-- results:start -->\n| Example") and text.endswith(
        "<!-- results:end -->\ntail\n") and "old" not in text
    xor_row, cnn_row = [line for line in text.splitlines() if line.startswith("| xor")
                        or line.startswith("| mnist_cnn")]
    assert "1e-05" in xor_row and "(met)" in xor_row and "12 s" in xor_row
    assert "90.00%" in cnn_row and "**not met**" in cnn_row and "acc \\| accuracy" in cnn_row
    assert "unfinished run: result after epoch 2" in cnn_row
    assert report.main(["--readme", str(readme), "--results", str(results), "--check"]) == 0
    readme.write_text("no markers\n")
    with pytest.raises(SystemExit, match="results:start"):
        report.main(["--readme", str(readme), "--results", str(results)])


def test_readme_table_is_current(example):
    assert example("report").main(["--check"]) == 0


def test_curve_plot_skipped_without_matplotlib(example, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)   # import fails
    history = [{"epoch": 1, "train_loss": 1.0, "test_accuracy": 0.5}]
    assert example("mnist_curve").plot(tmp_path / "c.png", history, "t") is False
    assert "skipping the plot" in capsys.readouterr().out and not (tmp_path / "c.png").exists()
