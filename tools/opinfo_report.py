"""Run tests/opinfo's five checks (value, VJP, JVP, jit, vmap) over every sample of every
mapped OpInfo, outside pytest, and print the counts: OpInfos mapped, and per check the
OpInfos and samples run, passed, skipped (no fnad form, or the check does not apply) and
failed (xfail when tests/opinfo/known.py lists the defect).

    python tools/opinfo_report.py            # every sample
    python tools/opinfo_report.py --quick    # the default suite's subset
    python tools/opinfo_report.py -v abs sum # print each failure of the named ops
"""

import argparse
import collections
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ops", nargs="*", help="OpInfo names (default: every mapped one)")
    p.add_argument("--quick", action="store_true", help="only the default suite's samples")
    p.add_argument("-v", "--verbose", action="store_true", help="print every failure")
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")
    from tests.opinfo import harness, known
    names = a.ops or sorted(harness.MAPPING)
    unknown = [n for n in names if n not in harness.ops()]
    if unknown:
        sys.exit(f"not OpInfos in torch's op_db: {unknown}")
    counts = collections.defaultdict(collections.Counter)
    opcount = collections.defaultdict(set)
    for name in names:
        for dtype in harness.DTYPES:
            if a.quick and dtype != harness.quick_dtype(name):
                continue
            if a.quick:
                cs, skipped = harness.quick_cases(name, dtype), 0
            else:
                cs, skipped = harness.cases(name, dtype)
            for check in harness.CHECKS:
                counts[check]["no fnad form"] += skipped
                for case in cs:
                    outcome, msg = harness.outcome(case, check, dtype)
                    counts[check][outcome] += 1
                    if outcome in ("passed", "failed", "xfailed"):
                        opcount[check, outcome].add(name)
                    if a.verbose and outcome in ("failed", "xfailed"):
                        print(f"{outcome.upper()} {check} {name} {dtype}: "
                              + " | ".join(msg.split("\n"))[:400])
    print(f"OpInfos in op_db: {len(harness.ops())}; mapped to fnad: {len(harness.MAPPING)}; "
          f"differences left as xfail (known.XFAIL): {len(known.XFAIL)}")
    print(f"{'check':6} {'ops run':>7} {'samples':>8} {'passed':>7} {'xfailed':>8} "
          f"{'failed':>7} {'n/a':>6} {'no fnad form':>12}")
    for check in harness.CHECKS:
        c = counts[check]
        ran = c["passed"] + c["xfailed"] + c["failed"]
        ops = set().union(*(opcount[check, o] for o in ("passed", "failed", "xfailed")))
        print(f"{check:6} {len(ops):7} {ran:8} {c['passed']:7} {c['xfailed']:8} "
              f"{c['failed']:7} {c['skipped']:6} {c['no fnad form']:12}")
    return 1 if any(counts[c]["failed"] for c in harness.CHECKS) else 0


if __name__ == "__main__":
    sys.exit(main())
