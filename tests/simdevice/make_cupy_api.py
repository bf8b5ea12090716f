"""Write tests/simdevice/cupy_api.py, the part of CuPy's interface the simulated device copies.

Reads CuPy's sources (no import, no GPU) at one or more release tags of a git checkout of
github.com/cupy/cupy and keeps what every tag has in common, so the simulated device offers
a function only where each of those CuPy releases does:

  python tests/simdevice/make_cupy_api.py /path/to/cupy.git v13.6.0 v14.2.0

For each public name of `cupy`, `cupy.linalg`, `cupy.fft` and `cupyx.scipy.special` it
records what the name is: a ufunc (elementwise kernel: only the keywords `out`, `dtype` and
`casting`, NumPy's `where=` is not there), a function with the parameters of its Python or
Cython definition (the simulated device refuses keywords CuPy's function does not take), or
something whose parameters the sources do not show (accepted as NumPy's). It also records
the methods of `cupy.ndarray` with their parameters.
"""

import ast
import re
import subprocess
import sys

MODULES = ("cupy", "cupy.linalg", "cupy.fft", "cupyx.scipy.special")
UFUNC_MAKERS = re.compile(r"(create_ufunc|create_math_ufunc|_create_bit_op|create_comparison|"
                          r"create_arithmetic|_create_float_test_ufunc|create_math_ufunc|"
                          r"ufunc\.create|_core\.create_ufunc|_create_ufunc)")


class Source:
    def __init__(self, repo, tag):
        self.repo, self.tag = repo, tag
        self.cache = {}

    def text(self, module):
        """(text, is_python) of a module, or (None, None)."""
        if module not in self.cache:
            base = module.replace(".", "/")
            for path, py in ((base + ".py", True), (base + ".pyx", False),
                             (base + "/__init__.py", True)):
                r = subprocess.run(["git", "-C", self.repo, "show", f"{self.tag}:{path}"],
                                   capture_output=True, text=True)
                if r.returncode == 0:
                    self.cache[module] = (r.stdout, py)
                    break
            else:
                self.cache[module] = (None, None)
        return self.cache[module]


def _absolute(module, node):
    if node.level == 0:
        return node.module
    parts = module.split(".")
    base = parts[:len(parts) - node.level + (1 if _is_package(module) else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_package(module):
    return module in MODULES or module.count(".") == 0


def _params_of(args):
    """A parameter list as source text, every default written `_`."""
    out = []
    posonly = list(args.posonlyargs)
    regular = list(args.args)
    n_def = len(args.defaults)
    allpos = posonly + regular
    first_default = len(allpos) - n_def
    for i, a in enumerate(allpos):
        out.append(a.arg + ("=_" if i >= first_default else ""))
        if posonly and i == len(posonly) - 1:
            out.append("/")
    if args.vararg:
        out.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        out.append("*")
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(a.arg + ("" if d is None else "=_"))
    if args.kwarg:
        out.append("**" + args.kwarg.arg)
    return out


def _cython_params(text):
    """Parameter names of a Cython `def`/`cpdef` header's argument text."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    params = []
    for p in out:
        p = p.strip()
        if not p:
            continue
        name, eq, _ = p.partition("=")
        name = name.strip().split()[-1].lstrip("&")
        if name in ("self", "cls"):
            continue
        if name.startswith("*") or name == "/":
            params.append(name)
        else:
            params.append(name + ("=_" if eq else ""))
    return params


def _cython_header(text, name):
    m = re.search(rf"^[ ]*(?:cp)?def\s+(?:[\w.]+\s+)?{name}\s*\(", text, re.M)
    if not m:
        return None
    depth, i = 1, m.end()
    start = i
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return _cython_params(text[start:i - 1])


def resolve(src, module, name, depth=0):
    """("ufunc",), ("function", params) or ("other",) for `module.name`."""
    if depth > 12:
        return ("other",)
    text, py = src.text(module)
    if text is None:
        return ("other",)
    if not py:
        return _resolve_cython(src, module, name, text, depth)
    tree = ast.parse(text)
    found = ("other",)
    for node in tree.body:  # the last binding of the name wins, as at import time
        if isinstance(node, ast.FunctionDef) and node.name == name:
            found = ("function", _params_of(node.args))
        elif isinstance(node, ast.ClassDef) and node.name == name:
            found = ("other",)
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            found = _resolve_value(src, module, tree, node.value, depth)
        elif isinstance(node, ast.ImportFrom) and node.module is not None or (
                isinstance(node, ast.ImportFrom) and node.level):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    found = resolve(src, _absolute(module, node), alias.name, depth + 1)
    return found


def _resolve_value(src, module, tree, value, depth):
    if isinstance(value, ast.Call):
        fn = ast.unparse(value.func)
        if UFUNC_MAKERS.search(fn):
            return ("ufunc",)
        return ("other",)
    if isinstance(value, ast.Name):
        return resolve(src, module, value.id, depth + 1)
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == value.value.id:
                        return resolve(src, _absolute(module, node) + "." + alias.name,
                                       value.attr, depth + 1)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if (alias.asname or alias.name) == value.value.id:
                        return resolve(src, alias.name, value.attr, depth + 1)
    return ("other",)


def _resolve_cython(src, module, name, text, depth):
    params = _cython_header(text, name)
    if params is not None:
        return ("function", params)
    m = re.search(rf"^(?:cdef\s+[\w.]+\s+)?{name}\s*=\s*([\w.]+)", text, re.M)
    if m:
        if UFUNC_MAKERS.search(m.group(1)):
            return ("ufunc",)
        target = m.group(1)
        if target != name and "." not in target and re.fullmatch(r"[A-Za-z_]\w*", target):
            return resolve(src, module, target, depth + 1)
        return ("other",)
    m = re.search(rf"^from\s+([\w.]+)\s+c?import\s+.*\b(\w+)\s+as\s+{name}\b", text, re.M)
    if m:
        return resolve(src, m.group(1), m.group(2), depth + 1)
    m = re.search(rf"^from\s+([\w.]+)\s+c?import\s+(?:.*,\s*)?{name}\b", text, re.M)
    if m:
        return resolve(src, m.group(1), name, depth + 1)
    return ("other",)


def public_names(src, module):
    """Every public name bound at the top of `module`'s __init__ (imports and defs)."""
    text, _ = src.text(module)
    tree = ast.parse(text)
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.module == "numpy":  # dtypes, constants, dtype helpers: NumPy's own
                for alias in node.names:
                    names[alias.asname or alias.name] = ("numpy", alias.name)
                continue
            for alias in node.names:
                n = alias.asname or alias.name
                if not n.startswith("_"):
                    names[n] = resolve(src, _absolute(module, node), alias.name)
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            names[node.name] = ("function", _params_of(node.args))
    return names


def ndarray_methods(src):
    text, _ = src.text("cupy._core.core")
    body = text[text.index("cdef class _ndarray_base"):]
    body = body[:body.index("\ncdef ", 10)] if "\ncdef " in body[10:] else body
    methods = {}
    for m in re.finditer(r"^    (?:cp)?def\s+(?:[\w.]+\s+)?(\w+)\s*\(", body, re.M):
        name = m.group(1)
        if name.startswith("_") and not name.startswith("__"):
            continue
        methods[name] = ("function", _cython_header(body[m.start():], name))
    for m in re.finditer(r"^    @property\n    def (\w+)", body, re.M):
        methods[m.group(1)] = ("property",)
    for m in re.finditer(r"^    property (\w+):", body, re.M):
        methods[m.group(1)] = ("property",)
    return methods


def merge(a, b):
    """What two releases share: names in both; parameters in both (by name)."""
    out = {}
    for name in a.keys() & b.keys():
        x, y = a[name], b[name]
        if x[0] == "function" and y[0] == "function":
            ys = {p.split("=")[0] for p in y[1]}
            out[name] = ("function", [p for p in x[1] if p.split("=")[0] in ys])
        elif x == y:
            out[name] = x
        else:
            out[name] = ("other",)
    return out


def main(repo, tags):
    apis = []
    for tag in tags:
        src = Source(repo, tag)
        api = {mod: public_names(src, mod) for mod in MODULES}
        api["ndarray"] = ndarray_methods(src)
        apis.append(api)
    api = apis[0]
    for other in apis[1:]:
        api = {k: merge(api[k], other[k]) for k in api}
    lines = ['"""CuPy\'s interface as tests/simdevice copies it, written by make_cupy_api.py '
             "from the", f"sources of CuPy {', '.join(tags)}: the names and parameters they all "
             'share. Do not edit."""', "",
             "# ('ufunc',); ('function', parameters with every default written `_`);",
             "# ('numpy', name): NumPy's own object; ('property',); ('other',): parameters unknown",
             "API = {"]
    for mod in sorted(api):
        lines.append(f"    {mod!r}: {{")
        for name in sorted(api[mod]):
            entry = api[mod][name]
            if entry[0] == "function":
                params = "(" + ", ".join(entry[1]) + ")"
                line = f"        {name!r}: ('function', {params!r}),"
                lines.append(line + ("  # noqa: E501" if len(line) > 100 else ""))
            else:
                lines.append(f"        {name!r}: {tuple(entry)!r},")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    out = main(sys.argv[1], sys.argv[2:] or ["v14.2.0"])
    with open(__file__.replace("make_cupy_api.py", "cupy_api.py"), "w") as f:
        f.write(out)
