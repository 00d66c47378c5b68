# The multus package's entry points, and revendor's own build and tests.
#
#   make install     build and install revendor (the main job's set-up)
#   make update      move the vendored multus-cni to the newest release in track
#   make check       the drift check the nightly job runs
#   make test-deps   install everything the tests need (the tests' set-up)
#   make test        run the whole test suite
#   make lint-workflows  actionlint (with shellcheck) over .github/workflows

CARGO ?= cargo
REVENDOR ?= $(CARGO) run --quiet --release --

.PHONY: install update render check image test-deps test lint lint-workflows bench

install:
	./scripts/install-build-deps
	$(CARGO) install --locked --path .

update:
	$(REVENDOR) update

render:
	$(REVENDOR) render

check:
	$(REVENDOR) check

image:
	$(REVENDOR) image build --push

test-deps:
	./scripts/install-build-deps
	./scripts/install-test-deps

# Go 1.26 for the image test lives in the venv install-test-deps made, and
# so does the helm the contracts on what Helm renders run with (Helm v4's
# engine under a `helm template` command; REVENDOR_HELM may name another).
test:
	PATH="$(CURDIR)/.tools/venv/bin:$$PATH" \
	REVENDOR_HELM="$${REVENDOR_HELM:-$(CURDIR)/.tools/venv/bin/revendor-test-helm}" \
	$(CARGO) test --locked -- --test-threads=2

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

# actionlint runs shellcheck on every `run:` block; zizmor audits the
# workflows and both actions (.github/zizmor.yml); install-test-deps
# installs all three. Then what actionlint does not check (pins, permissions),
# and the scripts the workflows call, checked and tested.
lint-workflows:
	PATH="$(CURDIR)/.tools/venv/bin:$$PATH" actionlint .github/workflows/*.yml
	PATH="$(CURDIR)/.tools/venv/bin:$$PATH" zizmor --offline --quiet .github install
	./scripts/lint-workflow-policy
	shellcheck .ci/run scripts/* install/*.sh
	./scripts/test-workflow-scripts
	./scripts/test-install-action

# Each prints its figures and ratios against the peer on the same input; the
# README's "Speed" section quotes them. update_vs_shell and check read
# cozystack's real files through REVENDOR_REALWORLD (default: the shared
# folder beside this repository, as .ci/run uses).
bench: export REVENDOR_REALWORLD ?= $(abspath ../shared/realworld)
bench:
	$(CARGO) bench --bench render_vs_patch
	$(CARGO) bench --bench rebase_vs_merge_file
	$(CARGO) bench --bench crd
	$(CARGO) bench --bench check
	$(CARGO) bench --bench update_vs_shell
	$(CARGO) bench --bench image_skip
