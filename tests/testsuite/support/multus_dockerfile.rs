//! Our multus Dockerfile in cozystack's shape, for the real-world tests that commit it to a
//! package: the CNI plugins pinned with their checksums, multus built from source with the
//! source patches, the plugins staged beside it.

use super::Realworld;

/// The Dockerfile at `version`, every other value from facts.toml.
pub fn multus_dockerfile(rw: &Realworld, version: &str) -> String {
    let fact = |keys: &[&str]| rw.fact_str(keys).to_owned();
    let sha = |arch: &str| fact(&["cni-plugins", &format!("sha256-{arch}-v1-9-1")]);
    format!(
        "# syntax=docker/dockerfile:1
# talos-cni-plugins-checked-against: {talos}
# kube-ovn-cni-plugins-checked-against: {ovn}
ARG CNI_PLUGINS_VERSION={cni}
ARG CNI_PLUGINS_SHA256_AMD64={amd64}
ARG CNI_PLUGINS_SHA256_ARM64={arm64}

FROM --platform=$BUILDPLATFORM {builder} AS builder
ARG VERSION={version}
ARG TARGETPLATFORM
WORKDIR /usr/src/multus-cni
RUN git clone --depth 1 --branch \"${{VERSION}}\" https://github.com/k8snetworkplumbingwg/multus-cni.git .
COPY patches/ /patches/
RUN git apply --verbose /patches/*.diff
RUN TARGETPLATFORM=\"${{TARGETPLATFORM}}\" ./hack/build-go.sh

FROM --platform=$BUILDPLATFORM {builder} AS cni-plugins
ARG CNI_PLUGINS_VERSION
ARG CNI_PLUGINS_SHA256_AMD64
ARG CNI_PLUGINS_SHA256_ARM64
ARG TARGETARCH
WORKDIR /cni-plugins
RUN set -eu; \\
    case \"${{TARGETARCH}}\" in \\
      amd64) sha=\"${{CNI_PLUGINS_SHA256_AMD64}}\" ;; \\
      arm64) sha=\"${{CNI_PLUGINS_SHA256_ARM64}}\" ;; \\
      *) echo \"no CNI plugins checksum for ${{TARGETARCH}}\" >&2; exit 1 ;; \\
    esac; \\
    archive=\"cni-plugins-linux-${{TARGETARCH}}-${{CNI_PLUGINS_VERSION}}.tgz\"; \\
    curl -fsSLo \"/tmp/${{archive}}\" \"https://github.com/containernetworking/plugins/releases/download/${{CNI_PLUGINS_VERSION}}/${{archive}}\"; \\
    echo \"${{sha}}  /tmp/${{archive}}\" | sha256sum -c -; \\
    tar -xzf \"/tmp/${{archive}}\" -C /cni-plugins ./bridge ./host-local ./portmap; \\
    rm -f \"/tmp/${{archive}}\"

FROM {base}
COPY --from=builder /usr/src/multus-cni/bin /usr/src/multus-cni/bin
COPY --from=cni-plugins /cni-plugins /cni-plugins
ENTRYPOINT [\"/usr/src/multus-cni/bin/thin_entrypoint\"]
",
        talos = fact(&["talos", "shipped"]),
        ovn = fact(&["kube-ovn", "vendored"]),
        cni = fact(&["cni-plugins", "pinned"]),
        amd64 = sha("amd64"),
        arm64 = sha("arm64"),
        builder = fact(&["cozystack-multus", "builder-image"]),
        base = fact(&["cozystack-multus", "final-base-image"]),
    )
}
