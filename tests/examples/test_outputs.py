"""Only the full default run of an example writes under docs/ (results/*.json, *.png,
*.csv, *.dot); a quick or otherwise changed run writes nothing there unless an output flag
says where (docs/ is pointed at a temporary directory here)."""

import json

import pytest

# example -> (a quick run's flags, the output flags and their default paths under docs/)
CASES = {
    "xor": (["--steps", "5"], {"out": "results/xor.json"}),
    "scalar_autodiff": (["--seed", "1"], {"out": "results/scalar_autodiff.json",
                                          "dot": "scalar_autodiff.dot"}),
    "graph_picture": (["--seed", "1"], {"dir": ""}),
    "mnist_mlp": (["--steps", "5"], {"out": "results/mnist_mlp.json"}),
    "mnist_cnn": (["--epochs", "1"], {"out": "results/mnist_cnn.json"}),
    "mnist_curve": (["--steps", "5"], {"out": "results/mnist_curve.json",
                                       "csv": "mnist_curve.csv"}),
    "per_example_grads": (["--steps", "3"], {"out": "results/per_example_grads.json"}),
    "train_gpt": (["--steps", "20"], {"out": "results/train_gpt.json",
                                      "plot": "train_gpt_loss.png"}),
    "rnn_lm": (["--steps", "20"], {"out": "results/rnn_lm.json", "plot": "rnn_lm_loss.png"}),
    "seq2seq": (["--steps", "20"], {"out": "results/seq2seq.json"}),
    "parity_gpt": (["--steps", "10"], {"out": ""}),
}


@pytest.fixture
def docs(example, monkeypatch, tmp_path):
    monkeypatch.setattr(example("_common"), "DOCS", tmp_path / "docs")
    return tmp_path / "docs"


def parse(mod, argv):
    return mod.parse(argv) if hasattr(mod, "parse") else mod.build_parser().parse_args(argv)


@pytest.mark.parametrize("name", list(CASES))
def test_only_the_full_default_run_writes_under_docs(example, docs, name, capsys):
    mod = example(name)
    quick, outputs = CASES[name]
    args = parse(mod, [])
    assert args.full_run
    assert {d: getattr(args, d) for d in outputs} == {d: docs / p for d, p in outputs.items()}
    capsys.readouterr()
    args = parse(mod, quick)
    assert not args.full_run and all(getattr(args, d) is None for d in outputs)
    said = capsys.readouterr().out
    assert f"{name}: not the full default run ({' '.join(quick)})" in said and "--" in said
    flags = [x for d in outputs for x in (f"--{d}", f"/tmp/{d}")]
    args = parse(mod, quick + flags)  # explicit outputs are always written
    assert {d: str(getattr(args, d)) for d in outputs} == {d: f"/tmp/{d}" for d in outputs}


@pytest.mark.parametrize("flags", [["--no-progress"], ["--data-dir", "/elsewhere"],
                                   ["--checkpoint", "run.npz", "--resume"]])
def test_neutral_flags_keep_the_full_run(example, docs, flags):
    args = example("train_gpt").parse(flags)
    assert args.full_run and args.out == docs / "results" / "train_gpt.json"


def test_changed_preset_is_not_the_full_run(example, docs):
    args = example("train_gpt").parse(["--preset", "tiny"])
    assert not args.full_run and args.out is None and args.plot is None


def test_quick_runs_write_nothing_and_the_full_run_writes(example, docs, tmp_path):
    xor, sa, gp = example("xor"), example("scalar_autodiff"), example("graph_picture")
    r = xor.main(["--steps", "5", "--no-progress"])
    assert r["command"] == "python examples/xor.py --steps 5 --no-progress"
    assert sa.main(["--seed", "1"])["value"] < 1e-6
    assert gp.main(["--seed", "1"]) == []
    assert not docs.exists()
    sa.main([])
    assert json.loads((docs / "results" / "scalar_autodiff.json").read_text())["seed"] == 0
    assert (docs / "scalar_autodiff.dot").read_text().startswith("digraph")
    xor.main(["--no-progress"])   # the full run: 2000 steps of a 2-4-4-1 MLP, about a second
    assert json.loads((docs / "results" / "xor.json").read_text())["steps"] == 2000
    out = tmp_path / "mine.json"
    xor.main(["--steps", "5", "--out", str(out)])
    assert json.loads(out.read_text())["steps"] == 5


def test_curve_from_a_committed_result_may_replace_the_committed_curve(example, docs,
                                                                       tmp_path):
    curve = example("mnist_curve")
    run = {"metric": "m", "command": "c", "wall_time_s": 1.0, "goal": None,
           "history": [{"epoch": 1, "step": 1, "train_loss": 0.5, "test_accuracy": 0.8,
                        "seconds": 1.0}]}
    elsewhere = tmp_path / "quick.json"
    elsewhere.write_text(json.dumps(run))
    curve.main(["--from-result", str(elsewhere)])
    assert not docs.exists()
    committed = docs / "results" / "mnist_mlp.json"
    committed.parent.mkdir(parents=True)
    committed.write_text(json.dumps(run))
    curve.main(["--from-result", str(committed)])
    assert (docs / "mnist_curve.csv").is_file()
    assert (docs / "results" / "mnist_curve.json").is_file()


def test_one_output_flag_writes_only_there(example, docs, tmp_path):
    """`scalar_autodiff.py --dot PATH`, a form its help shows, writes PATH and nothing under
    docs/ (issue 31: it rewrote docs/results/scalar_autodiff.json)."""
    sa = example("scalar_autodiff")
    args = parse(sa, ["--dot", str(tmp_path / "g.dot")])
    assert args.out is None and args.dot == tmp_path / "g.dot"
    sa.main(["--dot", str(tmp_path / "g.dot")])
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    assert not docs.exists()
    args = example("train_gpt").parse(["--out", str(tmp_path / "r.json")])
    assert args.plot is None


def test_commands_in_the_examples_help_write_outside_the_working_directory(example):
    """Every `python examples/...` line of an example's docstring (its --help) puts the files
    it names (checkpoints, outputs) at absolute paths, so that trying it leaves nothing in
    the working directory (issue 31: train_gpt's smoke command left run.npz there)."""
    from pathlib import Path
    writes = {"--checkpoint", "--out", "--dot", "--csv", "--plot", "--dir"}
    folder = Path(example("_common").__file__).parent
    for path in sorted(folder.glob("*.py")):
        for line in path.read_text().splitlines():
            words = line.split("#")[0].split()
            if words[:2] != ["python", f"examples/{path.name}"]:
                continue
            for flag, value in zip(words, words[1:]):
                assert flag not in writes or Path(value).is_absolute(), (path.name, line)
