#!/usr/bin/env python3
"""Golden outputs for the Jinja2 differential test (test/unit/jinja2-differential.test.ts).

Renders every case in test/templating/cases/*.json with real Jinja2 3.1 and MarkupSafe 3.0 (the
versions `pip install jinja2` brings: the goldens were written with Jinja2 3.1.6 and MarkupSafe 3.0.3
on CPython 3.11, whose Unicode database is version 14.0.0; "generator" in goldens.json names all
three), configured as the service configures its own engine, and writes test/templating/goldens.json.

Run from the repository root after changing a case:

    python3 test/templating/generate-goldens.py

Needs Jinja2 3.1 and MarkupSafe 3.0 (`pip install 'jinja2==3.1.6' 'markupsafe==3.0.3'`).

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

import importlib.metadata
import platform
import unicodedata

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
    jinja2_version = importlib.metadata.version("jinja2")
    markupsafe_version = importlib.metadata.version("markupsafe")
    if not jinja2_version.startswith("3.1."):
        sys.exit(f"Jinja2 3.1 is required, found {jinja2_version}")
    if not markupsafe_version.startswith("3.0."):
        sys.exit(f"MarkupSafe 3.0 is required, found {markupsafe_version}")
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
            {
                "generator": f"Jinja2 {jinja2_version}, MarkupSafe {markupsafe_version}, "
                f"Python {platform.python_version()} (Unicode {unicodedata.unidata_version})",
                "cases": goldens,
            },
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
