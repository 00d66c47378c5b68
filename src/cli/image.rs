//! `revendor image …`: build, pin, pin-base.

use crate::console::Format;
use crate::error::{Outcome, Result};
use crate::ops::image_build::{BuildOptions, build};
use crate::ops::image_pin::{PinOptions, PinReport, pin};
use crate::ops::pin_base::{PinBaseOptions, PinBaseReport, pin_base};
use crate::report;
use crate::workspace::Context;

/// Subcommands of `revendor image`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Build the multi-platform image; with --push, read its index back from the registry, verify it and pin it.
    Build(BuildArgs),
    /// Resolve and verify an existing image, and pin it.
    Pin(PinArgs),
    /// Pin every FROM image of each image's Dockerfile to its multi-platform index digest.
    PinBase(PinBaseArgs),
}

/// Flags of `revendor image build`.
#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// The [[image]] to build (by `name`); every image when left out.
    #[arg(value_name = "NAME")]
    pub image: Option<String>,
    /// Tag to build instead of $IMAGE_TAG or vendor.toml's `[image] tag`.
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
    /// Push the image, read it back from the registry, verify it and pin it.
    #[arg(long)]
    pub push: bool,
    /// Builder to use instead of vendor.toml's `builder`.
    #[arg(long, value_name = "B", value_parser = ["buildx", "buildah"])]
    pub builder: Option<String>,
    /// Print the builder's exact command lines; run nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Build even when the pinned image was built from the same content.
    #[arg(long)]
    pub force: bool,
    /// With --push: push over a tag that already names an image built from other content
    /// (PUBLISH_VERSIONED=1 allows it too); without it such a push is refused.
    #[arg(long)]
    pub move_tag: bool,
    /// A cache to read, in buildx's syntax (`type=registry,ref=R`; buildah: that
    /// repository); repeatable.
    #[arg(long, value_name = "SPEC")]
    pub cache_from: Vec<String>,
    /// A cache to write, in buildx's syntax (`type=registry,ref=R,mode=max`; buildah: that
    /// repository); repeatable.
    #[arg(long, value_name = "SPEC")]
    pub cache_to: Vec<String>,
    /// Arguments for the build command itself, after `--` (`-- --build-arg X=1 --target t`);
    /// they count in the content hash.
    #[arg(last = true, value_name = "BUILDER_ARGS")]
    pub builder_args: Vec<String>,
}

/// Flags of `revendor image pin`.
#[derive(Debug, clap::Args)]
pub struct PinArgs {
    /// The [[image]] to pin (by `name`); every image when left out, in one write.
    #[arg(value_name = "NAME")]
    pub image: Option<String>,
    /// Tag to resolve instead of $IMAGE_TAG or vendor.toml's `[image] tag`.
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
    /// Index digest to pin (verified) instead of the one the tag points to.
    #[arg(long, value_name = "D")]
    pub digest: Option<String>,
}

/// Flags of `revendor image pin-base`.
#[derive(Debug, clap::Args)]
pub struct PinBaseArgs {
    /// The [[image]] whose Dockerfile to pin (by `name`); every image when left out, in one
    /// write, each Dockerfile once.
    #[arg(value_name = "NAME")]
    pub image: Option<String>,
    /// Move the golang builder stages (and the `go` in vendor.toml of every image built from them)
    /// to this Go minor.
    #[arg(long, value_name = "X.Y")]
    pub go: Option<String>,
    /// Resolve and show the new FROM lines; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The JSON document of `image build` or `image pin` on several images:
/// one report per image, under `images`.
#[derive(serde::Serialize)]
struct Many<'a, T> {
    images: &'a [T],
}

/// The JSON document of `image pin-base` on several Dockerfiles: one report
/// per Dockerfile, under `dockerfiles`.
#[derive(serde::Serialize)]
struct Dockerfiles<'a> {
    dockerfiles: &'a [PinBaseReport],
}

pub(super) fn exec(ctx: &Context, cmd: Command) -> Result<Outcome> {
    let json = ctx.shell.format() == Format::Json;
    let text = match cmd {
        Command::Build(args) => {
            let reports = build(
                ctx,
                &BuildOptions {
                    image: args.image,
                    tag: args.tag,
                    push: args.push,
                    builder: args.builder,
                    dry_run: args.dry_run,
                    force: args.force,
                    move_tag: args.move_tag,
                    cache_from: args.cache_from,
                    cache_to: args.cache_to,
                    builder_args: args.builder_args,
                },
            )?;
            match (json, reports.as_slice()) {
                (true, [one]) => report::document(one),
                (true, images) => report::document(&Many { images }),
                (false, all) => all.iter().map(|r| r.human()).collect(),
            }
        }
        Command::Pin(args) => {
            let reports = pin(
                ctx,
                &PinOptions {
                    image: args.image,
                    tag: args.tag,
                    digest: args.digest,
                },
            )?;
            match (json, reports.as_slice()) {
                (true, [one]) => report::document(one),
                (true, images) => report::document(&Many { images }),
                (false, all) => PinReport::human_all(all),
            }
        }
        Command::PinBase(args) => {
            let reports = pin_base(
                ctx,
                &PinBaseOptions {
                    image: args.image,
                    go: args.go,
                    dry_run: args.dry_run,
                },
            )?;
            match (json, reports.as_slice()) {
                (true, [one]) => report::document(one),
                (true, dockerfiles) => report::document(&Dockerfiles { dockerfiles }),
                (false, all) => PinBaseReport::human_all(all),
            }
        }
    };
    super::out(ctx, &text)?;
    Ok(Outcome::Clean)
}
