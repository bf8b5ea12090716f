"""The settings table (fnad/_core/settings.py): each bad value stops with a message naming the
variable, its value and what is allowed; defaults; allowed values; a changed variable is seen
on the next read; no other module of fnad reads the environment; docs/settings.md is what
tools/gen_settings_doc.py generates."""

import ast
import importlib.util
import pathlib
from pathlib import Path

import numpy as np
import pytest

import fnad.extend
import fnad_nn.data
from fnad._core import settings
from fnad._core.settings import SETTINGS, SettingError, setting
from fnad._jit import fusion
from fnad.kernels import _cpu, _threads

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def clean(monkeypatch):
    for name in list(SETTINGS) + list(settings.OTHER_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


# ----------------------------------------------------------------------------- validation

BAD = [("FNAD_NUM_THREADS", "four", "a positive integer"),
       ("FNAD_NUM_THREADS", "0", "a positive integer"),
       ("FNAD_NUM_THREADS", "2.5", "a positive integer"),
       ("FNAD_CPU_KERNELS", "bogus", "one of numba, numpy"),
       ("FNAD_MALLOC", "glibc", "one of system, keep"),
       ("FNAD_FUSION", "bogus", "one of numba, numexpr, numpy, off"),
       ("FNAD_PARALLEL_MIN", "-1", "an integer >= 0"),
       ("FNAD_OFFLINE", "maybe", "1, true, yes or on"),
       ("FNAD_NCCL", "2", "1, true, yes or on"),
       ("FNAD_CUDA_AWARE_MPI", "sure", "1, true, yes or on")]


@pytest.mark.parametrize("name,value,expected", BAD, ids=[f"{n}={v}" for n, v, _ in BAD])
def test_a_bad_value_names_the_variable_its_value_and_what_is_allowed(clean, name, value,
                                                                       expected):
    clean.setenv(name, value)
    with pytest.raises(SettingError) as e:
        setting(name)
    msg = str(e.value)
    assert msg.startswith(f"{name}={value!r} is not valid: expected {expected}")
    assert f"unset it or set e.g. {name}=" in msg
    clean.setenv(name, msg.rsplit("=", 1)[1])  # the example given is allowed
    setting(name)


def test_the_message_for_a_thread_count_in_words(clean):
    clean.setenv("FNAD_NUM_THREADS", "four")
    want = ("FNAD_NUM_THREADS='four' is not valid: expected a positive integer (threads for "
            "fnad's CPU kernels); unset it or set e.g. FNAD_NUM_THREADS=2")
    with pytest.raises(SettingError) as e:
        setting("FNAD_NUM_THREADS")
    assert str(e.value) == want


def test_kernels_and_jit_report_a_bad_setting_by_name(clean):
    clean.setenv("FNAD_NUM_THREADS", "four")
    with pytest.raises(SettingError, match="FNAD_NUM_THREADS='four'"):
        _threads.run_ranges(lambda lo, hi: None, 10, (), work=1 << 20)
    clean.setenv("FNAD_CPU_KERNELS", "bogus")
    with pytest.raises(SettingError, match="FNAD_CPU_KERNELS='bogus'"):
        _cpu.gelu(np.ones(4, np.float32))
    clean.setattr(fusion, "_backend", None)
    clean.setenv("FNAD_FUSION", "bogus")
    with pytest.raises(SettingError, match="FNAD_FUSION='bogus'"):
        fusion.get_backend()
    assert fusion._backend is None  # nothing half-set: the next call checks again


# ----------------------------------------------------------------------------- values

def test_defaults_when_unset_or_empty(clean):
    defaults = {name: s.default for name, s in SETTINGS.items()}
    assert {name: setting(name) for name in SETTINGS} == defaults
    for name in SETTINGS:
        clean.setenv(name, "")
    assert {name: setting(name) for name in SETTINGS} == defaults
    assert (defaults["FNAD_NUM_THREADS"], defaults["FNAD_CPU_KERNELS"], defaults["FNAD_FUSION"],
            defaults["FNAD_PARALLEL_MIN"], defaults["FNAD_OFFLINE"]) == (None, "numba", None,
                                                                       1 << 62, False)


ALLOWED = [("FNAD_NUM_THREADS", " 3 ", 3), ("FNAD_CPU_KERNELS", "NumPy", "numpy"),
           ("FNAD_MALLOC", "KEEP", "keep"), ("FNAD_FUSION", "numexpr", "numexpr"),
           ("FNAD_FUSION", "off", "off"), ("FNAD_PARALLEL_MIN", "0", 0),
           ("FNAD_CACHE_DIR", "/tmp/c d", "/tmp/c d"), ("FNAD_OFFLINE", "1", True),
           ("FNAD_OFFLINE", "0", False), ("FNAD_OFFLINE", "yes", True),
           ("FNAD_NCCL", "off", False), ("FNAD_NCCL", "TRUE", True),
           ("FNAD_CUDA_AWARE_MPI", "1", True)]


@pytest.mark.parametrize("name,text,value", ALLOWED, ids=[f"{n}={t}" for n, t, _ in ALLOWED])
def test_allowed_values(clean, name, text, value):
    clean.setenv(name, text)
    assert setting(name) == value


def test_a_changed_variable_is_seen_on_the_next_read(clean):
    for n in ("1", "2", "5"):
        clean.setenv("FNAD_NUM_THREADS", n)
        assert _threads.num_threads() == int(n)
    clean.setenv("FNAD_CPU_KERNELS", "numpy")
    assert not _cpu.available()


def test_the_table_is_complete_and_every_kind_gives_an_allowed_example():
    for name, s in SETTINGS.items():
        assert name == s.name and name.startswith("FNAD_") and s.doc and s.read
        assert s.kind.parse(s.kind.example) is not None, name
    assert set(settings.LAUNCHER_VARS) <= set(settings.OTHER_VARIABLES)
    assert not set(SETTINGS) & set(settings.OTHER_VARIABLES)


def test_fusion_choices_are_the_backends():
    want = set(fusion._ORDER) | {"off"}
    assert set(SETTINGS["FNAD_FUSION"].kind.expected[len("one of "):].split(", ")) == want


def test_only_declared_other_variables_can_be_read(clean):
    clean.setenv("XDG_CACHE_HOME", "/x")
    assert settings.environ_get("XDG_CACHE_HOME") == "/x"
    with pytest.raises(KeyError, match="OTHER_VARIABLES"):
        settings.environ_get("HOME")


def test_one_cache_dir_for_downloads_and_kernels(clean, tmp_path):
    home = Path.home() / ".cache" / "fnad"
    assert settings.cache_dir() == home and settings.kernel_cache_dir() == home / "kernels"
    clean.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert settings.cache_dir() == tmp_path / "fnad"
    assert settings.kernel_cache_dir() == home / "kernels"  # where kernels have always gone
    clean.setenv("FNAD_CACHE_DIR", str(tmp_path / "c"))
    assert settings.cache_dir() == tmp_path / "c"
    assert settings.kernel_cache_dir() == tmp_path / "c" / "kernels"
    assert fnad_nn.data.cache_dir is fnad.extend.cache_dir is settings.cache_dir


# ----------------------------------------------------------------------------- one home

_READS = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def _environment_reads(path):
    """Lines of `path` that touch the process environment (`os.environ`, `os.getenv`, ...,
    or such a name imported from os)."""
    tree = ast.parse(path.read_text())
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _READS:
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "posix", "nt"):
            lines += [node.lineno for a in node.names if a.name in _READS | {"*"}]
    return lines


def test_only_the_settings_module_reads_the_environment():
    home = ROOT / "fnad" / "_core" / "settings.py"
    paths = [p for pkg in ("fnad", "fnad_nn", "fnad_optim") for p in (ROOT / pkg).rglob("*.py")]
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(paths) if p != home
             for line in _environment_reads(p)]
    assert not found, ("read the environment through fnad/_core/settings.py (setting, "
                       f"environ_get; fnad.extend above the core): {found}")
    assert _environment_reads(home)


def test_the_check_catches_a_read(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import os\nfrom os import getenv\nx = os.environ.get('A')\n")
    assert sorted(_environment_reads(p)) == [2, 3]


# ----------------------------------------------------------------------------- docs

def test_settings_doc_is_generated_from_the_table():
    spec = importlib.util.spec_from_file_location("gen_settings_doc",
                                                  ROOT / "tools" / "gen_settings_doc.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert (ROOT / "docs" / "settings.md").read_text() == tool.render(), (
        "docs/settings.md is stale: run python tools/gen_settings_doc.py")
    for name in SETTINGS:
        assert f"`{name}`" in tool.render()
