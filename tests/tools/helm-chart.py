"""Chart repositories for revendor's tests, made by Helm v4's own engine.

helm-python-sdk binds Helm's Go SDK, so the archives, indexes and untarred
charts the tests compare against are Helm's, not a reimplementation:

    package CHART_DIR DEST_DIR          helm package: prints the archive's path
    repo-index DIR [--url URL]          helm repo index: writes DIR/index.yaml
    pull CHART --repo URL --version V --untar-dir DIR
                                        helm pull --untar from an HTTP repository
    push ARCHIVE oci://HOST/PATH        helm push (plain http to this machine)

On a failure: `Error: <what Helm said>` on stderr and exit code 1.
"""

import sys

import helm_python as helm
from helm_python import chart as charts
from helm_python import registry

USAGE = __doc__.split("\n\n")[1]


def fail(message, code=1):
    sys.stderr.write(f"Error: {message}\n")
    sys.exit(code)


def flags(rest, known):
    """`--name value` pairs of `rest`, each one of `known`."""
    out = {}
    while rest:
        flag = rest.pop(0)
        if flag not in known or not rest:
            fail(f"unknown or incomplete flag {flag!r}\n{USAGE}", 2)
        out[flag] = rest.pop(0)
    return out


def main(argv):
    if not argv:
        fail(USAGE, 2)
    command, rest = argv[0], argv[1:]
    try:
        if command == "package" and len(rest) == 2:
            print(charts.package(rest[0], destination=rest[1]))
        elif command == "repo-index" and rest:
            opts = flags(rest[1:], {"--url"})
            registry.repo_index_generate(rest[0], base_url=opts.get("--url"))
        elif command == "pull" and rest:
            opts = flags(rest[1:], {"--repo", "--version", "--untar-dir"})
            registry.pull(
                rest[0],
                repo_url=opts["--repo"],
                version=opts["--version"],
                untar=True,
                untar_dir=opts["--untar-dir"],
                destination=opts["--untar-dir"],
            )
        elif command == "push" and len(rest) == 2:
            registry.push(rest[0], rest[1], plain_http=True)
        else:
            fail(USAGE, 2)
    except helm.HelmError as e:
        fail(e.detail)


if __name__ == "__main__":
    main(sys.argv[1:])
