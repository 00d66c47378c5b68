"""Helm for revendor's tests, over Helm v4's own engine: the one Helm entry point.

helm-python-sdk binds Helm's Go SDK (the same chart loader, .helmignore,
values coalescing, template engine, packager, repository indexer and OCI
client as the helm binary), so the tests run the real thing without
downloading a helm release. scripts/install-test-deps installs this file as
.tools/venv/bin/revendor-test-helm, which the tests point REVENDOR_HELM at:

    template NAME CHART [--values FILE]...
        helm template, with only what revendor passes: every rendered
        document on stdout as `---\\n# Source: <chart>/<template>\\n<document>\\n`.
        Values files are merged in order, a later file's keys over an
        earlier one's (maps merged key by key), then over the chart's
        values.yaml, where a `null` removes a default, as helm does.

The tests also make their chart repositories and registries with it:

    package CHART_DIR DEST_DIR          helm package: prints the archive's path
    repo-index DIR [--url URL]          helm repo index: writes DIR/index.yaml
    pull CHART --repo URL --version V --untar-dir DIR
                                        helm pull --untar from an HTTP repository
    pull oci://HOST/PATH/CHART --version V --untar-dir DIR
                                        helm pull --untar from an OCI registry
                                        (plain http: a registry on this machine)
    push ARCHIVE oci://HOST/PATH        helm push (plain http to this machine)

On a failure: `Error: <what Helm said>` on stderr and exit code 1 (2 for a
command line it does not take).
"""

import re
import sys

import helm_python as helm
from helm_python import chart as charts
from helm_python import registry

USAGE = """usage: revendor-test-helm template NAME CHART [--values FILE]...
       revendor-test-helm package CHART_DIR DEST_DIR
       revendor-test-helm repo-index DIR [--url URL]
       revendor-test-helm pull CHART --repo URL --version V --untar-dir DIR
       revendor-test-helm pull oci://HOST/PATH/CHART --version V --untar-dir DIR
       revendor-test-helm push ARCHIVE oci://HOST/PATH"""
# Helm's releaseutil.SplitManifests: a `---` line (and what follows it on
# that line) separates documents.
SEPARATOR = re.compile(r"(?:^|\s*\n)---\s*")


def fail(message, code=1):
    sys.stderr.write(f"Error: {message}\n")
    sys.exit(code)


def parse(argv):
    if len(argv) < 3:
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
            fail(f"unknown flag {flag!r}\n{USAGE}", 2)
    return name, chart, values


def flags(rest, known):
    """`--name value` pairs of `rest`, each one of `known`."""
    out = {}
    while rest:
        flag = rest.pop(0)
        if flag not in known or not rest:
            fail(f"unknown or incomplete flag {flag!r}\n{USAGE}", 2)
        out[flag] = rest.pop(0)
    return out


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


def template(argv):
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


def pull(ref, rest):
    """helm pull --untar, from an HTTP repository or an OCI registry."""
    opts = flags(rest, {"--repo", "--version", "--untar-dir"})
    oci = ref.startswith("oci://")
    if oci == ("--repo" in opts):
        fail(f"pull takes --repo for a chart name, none for an oci:// reference\n{USAGE}", 2)
    registry.pull(
        ref,
        repo_url=opts.get("--repo"),
        version=opts["--version"],
        untar=True,
        untar_dir=opts["--untar-dir"],
        destination=opts["--untar-dir"],
        plain_http=oci,
    )


def main(argv):
    if not argv:
        fail(USAGE, 2)
    command, rest = argv[0], argv[1:]
    if command == "template":
        template(argv)
        return
    try:
        if command == "package" and len(rest) == 2:
            print(charts.package(rest[0], destination=rest[1]))
        elif command == "repo-index" and rest:
            opts = flags(rest[1:], {"--url"})
            registry.repo_index_generate(rest[0], base_url=opts.get("--url"))
        elif command == "pull" and rest:
            pull(rest[0], rest[1:])
        elif command == "push" and len(rest) == 2:
            registry.push(rest[0], rest[1], plain_http=True)
        else:
            fail(USAGE, 2)
    except helm.HelmError as e:
        fail(e.detail)


if __name__ == "__main__":
    main(sys.argv[1:])
