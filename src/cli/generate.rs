//! `revendor completions <shell>` and `revendor man`: what a package
//! manager installs beside the binary, generated from this very command
//! line so they never fall behind it (ripgrep's `--generate`, as separate
//! subcommands). Neither reads a package.

use clap::CommandFactory;

use super::Cli;
use crate::console::Shell;
use crate::error::{Error, Outcome};

/// Arguments of `revendor completions`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script for `args.shell` on stdout.
pub fn completions(shell: &Shell, args: Args) -> Result<Outcome, Error> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "revendor", &mut script);
    print(shell, script)
}

/// Prints revendor(1), the man page of the whole command line, in roff.
pub fn man(shell: &Shell) -> Result<Outcome, Error> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(Error::Stdout)?;
    print(shell, page)
}

/// Writes generated text as it is: it is revendor's own, with nothing from
/// upstream in it.
fn print(shell: &Shell, bytes: Vec<u8>) -> Result<Outcome, Error> {
    let text = String::from_utf8(bytes).map_err(|e| Error::Bug(e.to_string()))?;
    shell.commands(&text).map_err(Error::Stdout)?;
    Ok(Outcome::Clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bash_script_completes_every_subcommand() {
        let mut script = Vec::new();
        clap_complete::generate(
            clap_complete::Shell::Bash,
            &mut Cli::command(),
            "revendor",
            &mut script,
        );
        let script = String::from_utf8(script).unwrap();
        for word in [
            "update",
            "render",
            "check",
            "pin-base",
            "completions",
            "man",
        ] {
            assert!(script.contains(word), "no {word} in\n{script}");
        }
    }

    #[test]
    fn the_man_page_names_the_commands() {
        let mut page = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut page)
            .unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.starts_with(".ie"), "{}", &page[..80.min(page.len())]);
        assert!(page.contains(".TH revendor 1"), "{page}");
        for word in ["update", "render", "check"] {
            assert!(page.contains(word), "no {word} in\n{page}");
        }
    }
}
