//! The standard example package of the integration tests, written once: `example/app`
//! publishes `deploy/app.yml`, a DaemonSet; the package vendors it to `templates/app.yml`,
//! patches its namespace to `cozy-app` and, as a test asks, rewrites, builds, pins, marks
//! and checks its image. [`Manifest`] says which manifest a test serves and gives the
//! namespace patch made against it; [`VendorToml`] says which tables vendor.toml holds.

/// The upstream repository.
pub const REPO: &str = "example/app";
/// The vendored file in it.
pub const FILE: &str = "deploy/app.yml";
/// Where the package vendors it.
pub const TEMPLATE: &str = "templates/app.yml";
/// The namespace patch.
pub const PATCH: &str = "patches/namespace.patch";
/// The package's lock.
pub const LOCK: &str = "upstream/lock.toml";
/// The pristine copy of the vendored file.
pub const PRISTINE: &str = "upstream/deploy/app.yml";
/// The image recipe.
pub const DOCKERFILE: &str = "image/Dockerfile";
/// A pinned reference of the package's image.
pub const PINNED: &str = "ghcr.io/example/app:v1@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// Which `deploy/app.yml` a test serves: bare (the name, the namespace and one container),
/// labelled with a version, with a memory limit on the container, or both.
#[derive(Clone, Copy, Default)]
pub struct Manifest {
    version: Option<&'static str>,
    memory_limit: bool,
}

impl Manifest {
    /// The bare manifest.
    pub const fn bare() -> Manifest {
        Manifest {
            version: None,
            memory_limit: false,
        }
    }

    /// With a `version` label under `metadata.labels`.
    pub const fn labelled(self, version: &'static str) -> Manifest {
        Manifest {
            version: Some(version),
            ..self
        }
    }

    /// With `resources.limits.memory: 64Mi` on the container.
    pub const fn memory_limit(self) -> Manifest {
        Manifest {
            memory_limit: true,
            ..self
        }
    }

    /// The manifest's text.
    pub fn text(&self) -> String {
        let mut s = String::from(
            "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: app\n  namespace: default\n",
        );
        if let Some(version) = self.version {
            s.push_str(&format!("  labels:\n    version: {version}\n"));
        }
        s.push_str(
            "spec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: example.org/upstream/app:snapshot\n",
        );
        if self.memory_limit {
            s.push_str("          resources:\n            limits:\n              memory: 64Mi\n");
        }
        s
    }

    /// The package's namespace patch against this manifest: lines 2 to 8, line 5 moved from
    /// `default` to `cozy-app`.
    pub fn namespace_patch(&self) -> String {
        let mut s =
            String::from("--- a/templates/app.yml\n+++ b/templates/app.yml\n@@ -2,7 +2,7 @@\n");
        for line in self.text().lines().skip(1).take(7) {
            if line == "  namespace: default" {
                s.push_str("-  namespace: default\n+  namespace: cozy-app\n");
            } else {
                s.push_str(&format!(" {line}\n"));
            }
        }
        s
    }

    /// `templates/app.yml` as the package renders it: patched, its image pinned to `image`.
    pub fn rendered(&self, image: &str) -> String {
        self.text()
            .replace("namespace: default", "namespace: cozy-app")
            .replace("example.org/upstream/app:snapshot", image)
    }
}

/// The manifest of the tests that build, pin and check the image: labelled v1.0.0, with a
/// memory limit for the contract to hold.
pub const LABELLED: Manifest = Manifest::bare().labelled("v1.0.0").memory_limit();

const UPSTREAM: &str = "[upstream]
github = \"example/app\"
version = \"v1.0.0\"
track = \">=1.0.0, <2.0.0\"
";

/// The one `[[vendor]]` table: `deploy/app.yml` to `templates/app.yml`.
pub const VENDOR: &str = "[[vendor]]\nfrom = \"deploy/app.yml\"\nto = \"templates/app.yml\"\n";

const NAMESPACE: &str = "[[patch]]
name = \"namespace\"
file = \"patches/namespace.patch\"
applies-to = \"vendor\"
";

const MEMORY: &str = "[[patch]]
name = \"memory\"
file = \"patches/memory.patch\"
applies-to = \"vendor\"
";

const GREET: &str = "[[patch]]
name = \"greet\"
file = \"image/patches/greet.diff\"
applies-to = \"source\"
strip = 1
";

const DOCKERFILE_REWRITE: &str = "[[rewrite]]
file = \"image/Dockerfile\"
dockerfile-arg = \"VERSION\"
with = \"{version}\"
";

const SNAPSHOT_REWRITE: &str = "[[rewrite]]
file = \"templates/app.yml\"
lines-containing = \"example.org/app\"
replace = \"snapshot\"
with = \"{version}\"
";

const IMAGE: &str = "[image]
repository = \"ghcr.io/example/app\"
tag = \"v1\"
context = \"image\"
platforms = [\"linux/amd64\", \"linux/arm64\"]
go = \"1.26\"
";

const PIN: &str = "[[pin]]
file = \"templates/app.yml\"
repository = \"ghcr.io/example/app\"
";

const MARKER: &str = "[[marker]]
name = \"cni\"
file = \"image/Dockerfile\"
key = \"cni-checked-against\"
expect = { value = \"v1.2.3\" }
pin = \"CNI_PLUGINS_VERSION\"
";

const CONTRACT: &str = "[[contract]]
name = \"memory\"
file = \"templates/app.yml\"
select = { kind = \"DaemonSet\" }
every-container = [\"resources\", \"limits\", \"memory\"]
";

/// The package's vendor.toml: `[upstream]` (`example/app` at v1.0.0, tracking 1.x), the
/// vendored file and the namespace patch always, each other table when asked for, in a
/// fixed order, a blank line between tables.
#[derive(Default)]
pub struct VendorToml {
    vendors: Option<String>,
    memory_patch: bool,
    greet_patch: bool,
    dockerfile_rewrite: bool,
    snapshot_rewrite: bool,
    image: bool,
    pin: bool,
    marker: bool,
    contract: bool,
}

impl VendorToml {
    /// `[upstream]`, [`VENDOR`] and the namespace patch.
    pub fn new() -> VendorToml {
        VendorToml::default()
    }

    /// `text` (one or more `[[vendor]]` tables) in place of [`VENDOR`].
    pub fn vendors(self, text: &str) -> VendorToml {
        VendorToml {
            vendors: Some(text.to_owned()),
            ..self
        }
    }

    /// A second vendor patch, `memory` in `patches/memory.patch`.
    pub fn memory_patch(self) -> VendorToml {
        VendorToml {
            memory_patch: true,
            ..self
        }
    }

    /// A source patch, `greet` in `image/patches/greet.diff`, stripping one component.
    pub fn greet_patch(self) -> VendorToml {
        VendorToml {
            greet_patch: true,
            ..self
        }
    }

    /// The Dockerfile's `ARG VERSION` rewritten to the upstream version.
    pub fn dockerfile_rewrite(self) -> VendorToml {
        VendorToml {
            dockerfile_rewrite: true,
            ..self
        }
    }

    /// The template's `example.org/app` lines: `snapshot` rewritten to the upstream version.
    pub fn snapshot_rewrite(self) -> VendorToml {
        VendorToml {
            snapshot_rewrite: true,
            ..self
        }
    }

    /// `[image]`: `ghcr.io/example/app:v1` built from `image/` for two platforms with Go 1.26.
    pub fn image(self) -> VendorToml {
        VendorToml {
            image: true,
            ..self
        }
    }

    /// The image pinned in the template.
    pub fn pin(self) -> VendorToml {
        VendorToml { pin: true, ..self }
    }

    /// The Dockerfile's `cni-checked-against` marker, expecting v1.2.3, pinning
    /// `CNI_PLUGINS_VERSION`.
    pub fn marker(self) -> VendorToml {
        VendorToml {
            marker: true,
            ..self
        }
    }

    /// Every container of the DaemonSet must set a memory limit.
    pub fn contract(self) -> VendorToml {
        VendorToml {
            contract: true,
            ..self
        }
    }

    /// The text.
    pub fn text(&self) -> String {
        let vendors = self.vendors.as_deref().unwrap_or(VENDOR);
        let tables = [
            (true, UPSTREAM),
            (true, vendors),
            (true, NAMESPACE),
            (self.memory_patch, MEMORY),
            (self.greet_patch, GREET),
            (self.dockerfile_rewrite, DOCKERFILE_REWRITE),
            (self.snapshot_rewrite, SNAPSHOT_REWRITE),
            (self.image, IMAGE),
            (self.pin, PIN),
            (self.marker, MARKER),
            (self.contract, CONTRACT),
        ];
        let chosen: Vec<&str> = tables
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, table)| *table)
            .collect();
        chosen.join("\n")
    }
}
