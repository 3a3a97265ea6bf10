#!/usr/bin/env python3
"""Golden outputs for the Jinja2 differential test (test/unit/jinja2-differential.test.ts).

Renders every case in test/templating/cases/*.json with real Jinja2 3.1, configured as the
service configures its own engine, and writes test/templating/goldens.json.

Run from the repository root after changing a case:

    python3 test/templating/generate-goldens.py

Needs Jinja2 3.1 (`pip install 'jinja2>=3.1,<3.2'`, or apt's python3-jinja2 on a recent distro).

Each case is rendered with
    jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
        .from_string(template).render(**variables)
and recorded as {"output": "..."} or, when Jinja2 raises,
    {"error": {"type": <exception class name>, "kind": "syntax" | "undefined" | "runtime",
               "message": str(e), "line": <int or null>}}
kind: TemplateSyntaxError / TemplateAssertionError -> syntax; UndefinedError -> undefined;
anything else -> runtime. line: e.lineno for syntax errors; otherwise the line of the innermost
traceback frame whose filename is "<template>" (null when there is none).
Every case that parses also records "undeclared": sorted(jinja2.meta.find_undeclared_variables(ast)).
"""

import glob
import json
import os
import sys

import jinja2
import jinja2.meta

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
OUT = os.path.join(HERE, "goldens.json")


def error_line(e, kind):
    if kind == "syntax":
        return getattr(e, "lineno", None)
    line = None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def render(case):
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    golden = render_only(env, case)
    try:
        golden["undeclared"] = sorted(jinja2.meta.find_undeclared_variables(env.parse(case["template"])))
    except Exception:  # noqa: BLE001 - a template that does not parse has no undeclared names
        pass
    return golden


def render_only(env, case):
    try:
        template = env.from_string(case["template"])
        return {"output": template.render(**case.get("variables", {}))}
    except Exception as e:  # noqa: BLE001 - every failure is a golden
        if isinstance(e, (jinja2.TemplateSyntaxError, jinja2.TemplateAssertionError)):
            kind = "syntax"
        elif isinstance(e, jinja2.UndefinedError):
            kind = "undefined"
        else:
            kind = "runtime"
        return {
            "error": {
                "type": type(e).__name__,
                "kind": kind,
                "message": str(e),
                "line": error_line(e, kind),
            }
        }


def main():
    if not jinja2.__version__.startswith("3.1."):
        sys.exit(f"Jinja2 3.1 is required, found {jinja2.__version__}")
    goldens = {}
    files = sorted(glob.glob(os.path.join(CASES, "*.json")))
    if not files:
        sys.exit(f"no case files in {CASES}")
    for path in files:
        with open(path, encoding="utf-8") as f:
            cases = json.load(f)
        if not isinstance(cases, list):
            sys.exit(f"{path}: expected a JSON array of cases")
        for case in cases:
            name = case.get("name")
            if not isinstance(name, str) or not isinstance(case.get("template"), str):
                sys.exit(f"{path}: a case needs a string name and template: {case!r}")
            if name in goldens:
                sys.exit(f"{path}: duplicate case name {name!r}")
            goldens[name] = render(case)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(
            {"generator": f"Jinja2 {jinja2.__version__}", "cases": goldens},
            f,
            sort_keys=True,
            indent=2,  # Biome, which formats this repository, leaves indent=2 as it is
            ensure_ascii=False,
        )
        f.write("\n")
    errors = sum(1 for g in goldens.values() if "error" in g)
    print(f"{len(goldens)} goldens ({errors} errors) from {len(files)} files -> {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
