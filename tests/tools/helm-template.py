"""`helm template` for revendor's tests, over Helm v4's own engine.

helm-python-sdk binds Helm's Go SDK (the same chart loader, .helmignore,
values coalescing and template engine as the helm binary), so the tests run
the real thing without downloading a helm release. This command takes only
what revendor passes:

    helm template NAME CHART [--values FILE]...

and answers as helm does: every rendered document on stdout as
`---\\n# Source: <chart>/<template>\\n<document>\\n`; on a failure `Error: <what
Helm said>` on stderr and exit code 1. Values files are merged in order, a
later file's keys over an earlier one's (maps merged key by key), then over
the chart's values.yaml, where a `null` removes a default, as helm does.
scripts/install-test-deps installs it as .tools/venv/bin/revendor-test-helm.
"""

import re
import sys

import helm_python as helm

USAGE = "usage: helm template NAME CHART [--values FILE]..."
# Helm's releaseutil.SplitManifests: a `---` line (and what follows it on
# that line) separates documents.
SEPARATOR = re.compile(r"(?:^|\s*\n)---\s*")


def fail(message, code=1):
    sys.stderr.write(f"Error: {message}\n")
    sys.exit(code)


def parse(argv):
    if len(argv) < 3 or argv[0] != "template":
        fail(USAGE, 2)
    name, chart, rest = argv[1], argv[2], argv[3:]
    values = []
    while rest:
        flag = rest.pop(0)
        if flag in ("--values", "-f") and rest:
            values.append(rest.pop(0))
        elif flag.startswith("--values="):
            values.append(flag.split("=", 1)[1])
        else:
            fail(f"unknown flag {flag!r}; {USAGE}", 2)
    return name, chart, values


def merge(base, over):
    """Helm's mergeMaps: maps merge key by key, anything else is replaced."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def documents(rendered):
    """Every non-empty document of every template, as helm prints them."""
    for source in sorted(rendered):
        base = source.rsplit("/", 1)[-1]
        if base.startswith("_") or base == "NOTES.txt":
            continue
        for doc in SEPARATOR.split(rendered[source].strip()):
            doc = doc.strip()
            if not doc:
                continue
            try:
                helm.values_from_yaml(doc)
            except helm.HelmError as e:
                fail(f"YAML parse error on {source}: {e.detail}")
            yield source, doc


def main(argv):
    name, chart_dir, files = parse(argv)
    values = {}
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            fail(f"open {path}: {e.strerror}")
        try:
            values = merge(values, helm.values_from_yaml(text) or {})
        except helm.HelmError as e:
            fail(f"failed to parse {path}: {e.detail}")
    try:
        with helm.Chart.load(chart_dir) as chart:
            rendered = chart.render(values, name=name, is_install=True)
            out = [f"---\n# Source: {s}\n{d}\n" for s, d in documents(rendered)]
    except helm.HelmError as e:
        fail(e.detail)
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
